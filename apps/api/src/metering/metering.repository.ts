import { Injectable } from '@nestjs/common';
import { PrismaService } from '@tally/db';

/** The rows a LiveKit event names, to tell whose usage it is. */
@Injectable()
export class MeteringRepository {
  constructor(private readonly prisma: PrismaService) {}

  async appOfRoom(room: string): Promise<string | undefined> {
    return (await this.prisma.stream.findUnique({ where: { room }, select: { appId: true } }))?.appId;
  }

  async ingress(livekitIngressId: string): Promise<{ appId: string; transcode: boolean } | undefined> {
    const row = await this.prisma.ingress.findUnique({ where: { livekitIngressId }, select: { appId: true, transcode: true } });
    return row ?? undefined;
  }
}
