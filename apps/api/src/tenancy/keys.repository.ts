import { Injectable } from '@nestjs/common';
import { type ApiKey, PrismaService } from '@tally/db';

@Injectable()
export class KeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(data: { id: string; appId: string; prefix: string; hash: string }): Promise<ApiKey> {
    return this.prisma.apiKey.create({ data });
  }

  listActive(appId: string): Promise<ApiKey[]> {
    return this.prisma.apiKey.findMany({ where: { appId, revokedAt: null }, orderBy: { createdAt: 'asc' } });
  }

  async revoke(appId: string, keyId: string, at: Date): Promise<boolean> {
    const { count } = await this.prisma.apiKey.updateMany({ where: { id: keyId, appId, revokedAt: null }, data: { revokedAt: at } });
    return count > 0;
  }

  findActiveByHash(hash: string): Promise<ApiKey | null> {
    return this.prisma.apiKey.findFirst({ where: { hash, revokedAt: null } });
  }

  async touchMany(keyIds: readonly string[], at: Date): Promise<void> {
    await this.prisma.apiKey.updateMany({ where: { id: { in: [...keyIds] } }, data: { lastUsedAt: at } });
  }
}
