import { Injectable } from '@nestjs/common';
import { type Camera, PrismaService, type Stream } from '@tally/db';

@Injectable()
export class ReconcileRepository {
  constructor(private readonly prisma: PrismaService) {}

  openStreams(): Promise<Stream[]> {
    return this.prisma.stream.findMany({ where: { status: { not: 'ended' } } });
  }

  /** Cameras not deleted, plus the rows (deleted ones included) of `ids`. */
  camerasLiveOr(ids: readonly string[]): Promise<Camera[]> {
    return this.prisma.camera.findMany({ where: { OR: [{ deletedAt: null }, { id: { in: [...ids] } }] } });
  }
}
