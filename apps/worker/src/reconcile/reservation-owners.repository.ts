import { Injectable } from '@nestjs/common';
import type { ReservationOwnerType } from '@tally/admission';
import { PrismaService } from '@tally/db';

export type OwnerState = 'running' | 'finished' | 'missing';

/** Whether the rows that reservations are held for still run: one query per owner type. */
@Injectable()
export class ReservationOwnersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Ids of `type` whose rows exist (running or finished); the rest are missing. */
  async states(type: ReservationOwnerType, ids: readonly string[]): Promise<Map<string, OwnerState>> {
    const rows = await this.rows(type, [...ids]);
    return new Map(ids.map((id) => [id, rows.has(id) ? (rows.get(id) ? 'running' : 'finished') : 'missing']));
  }

  /** Apps that exist and are not deleted. */
  async liveApps(ids: readonly string[]): Promise<Set<string>> {
    const rows = await this.prisma.app.findMany({ where: { id: { in: [...ids] }, deletedAt: null }, select: { id: true } });
    return new Set(rows.map((r) => r.id));
  }

  /** id → still running, for the rows that exist. A camera viewer is a lease without a row: never judged here. */
  private async rows(type: ReservationOwnerType, id: string[]): Promise<Map<string, boolean>> {
    const where = { id: { in: id } };
    switch (type) {
      case 'stream':
        return toMap(await this.prisma.stream.findMany({ where, select: { id: true, status: true } }), (r) => r.status !== 'ended');
      case 'recording':
        return toMap(await this.prisma.recording.findMany({ where, select: { id: true, status: true } }), (r) =>
          ['starting', 'active', 'ending'].includes(r.status),
        );
      case 'ladder':
        return toMap(await this.prisma.recording.findMany({ where, select: { id: true, ladderStatus: true } }), (r) =>
          ['queued', 'running'].includes(r.ladderStatus ?? ''),
        );
      case 'hls':
        return toMap(await this.prisma.hlsSession.findMany({ where, select: { id: true, status: true } }), (r) =>
          ['starting', 'live'].includes(r.status),
        );
      case 'ingress':
        return toMap(
          await this.prisma.ingress.findMany({ where, select: { id: true, status: true, deletedAt: true } }),
          (r) => r.deletedAt === null && r.status !== 'ended',
        );
      case 'camera':
        return toMap(await this.prisma.camera.findMany({ where, select: { id: true, deletedAt: true } }), (r) => r.deletedAt === null);
      case 'camera_viewer':
        return new Map(id.map((i) => [i, true]));
    }
  }
}

function toMap<R extends { id: string }>(rows: readonly R[], running: (row: R) => boolean): Map<string, boolean> {
  return new Map(rows.map((r) => [r.id, running(r)]));
}
