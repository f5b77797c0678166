import { Injectable } from '@nestjs/common';
import type { JoinedNodeRole } from '@tally/contracts';
import { type NodeCredential, PrismaService } from '@tally/db';

/** The rows behind joined nodes' Redis users: one per node, only the password's SHA-256. */
@Injectable()
export class NodeCredentialsRepository {
  constructor(private readonly prisma: PrismaService) {}

  save(nodeId: string, role: JoinedNodeRole, redisPasswordSha256: string): Promise<NodeCredential> {
    return this.prisma.nodeCredential.upsert({
      where: { nodeId },
      create: { nodeId, role, redisPasswordSha256 },
      update: { role, redisPasswordSha256 },
    });
  }

  get(nodeId: string): Promise<NodeCredential | null> {
    return this.prisma.nodeCredential.findUnique({ where: { nodeId } });
  }

  all(): Promise<NodeCredential[]> {
    return this.prisma.nodeCredential.findMany({ orderBy: { nodeId: 'asc' } });
  }

  /** True when there was a row. */
  async remove(nodeId: string): Promise<boolean> {
    return (await this.prisma.nodeCredential.deleteMany({ where: { nodeId } })).count > 0;
  }
}
