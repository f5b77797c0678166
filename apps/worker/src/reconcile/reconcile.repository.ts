import { Injectable } from '@nestjs/common';
import { POLICY_COLUMNS, toAppPolicy } from '@tally/admission';
import type { AppQuotaPolicy } from '@tally/capacity';
import { type Camera, PrismaService, type Stream } from '@tally/db';
import { toStreamView, WebhookOutbox } from '@tally/webhooks';
import { CacheInvalidation } from '@tally/runtime';

@Injectable()
export class ReconcileRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: WebhookOutbox,
    private readonly invalidation: CacheInvalidation,
  ) {}

  openStreams(): Promise<Stream[]> {
    return this.prisma.stream.findMany({ where: { status: { not: 'ended' } } });
  }

  /** Cameras not deleted, plus the rows (deleted ones included) of `ids`. */
  camerasLiveOr(ids: readonly string[]): Promise<Camera[]> {
    return this.prisma.camera.findMany({ where: { OR: [{ deletedAt: null }, { id: { in: [...ids] } }] } });
  }

  /** True when this call ended the stream; its stream.ended event is staged in the same transaction. */
  async markEnded(id: string, at: Date, reason: string): Promise<boolean> {
    const { ended, staged } = await this.prisma.$transaction(async (tx) => {
      const [stream] = await tx.stream.updateManyAndReturn({
        where: { id, status: { not: 'ended' } },
        data: { status: 'ended', endedAt: at, endReason: reason, participants: 0, publishers: 0 },
      });
      if (!stream) return { ended: false, staged: undefined };
      return { ended: true, staged: await this.outbox.stage(tx, stream.appId, 'stream.ended', toStreamView(stream)) };
    });
    await this.outbox.flush([staged]);
    // The API replicas stop minting tokens for it from their caches.
    if (ended) await this.invalidation.publish({ kind: 'stream', streamId: id });
    return ended;
  }

  async appPolicies(): Promise<AppQuotaPolicy[]> {
    return (await this.prisma.app.findMany({ where: { deletedAt: null }, select: POLICY_COLUMNS })).map(toAppPolicy);
  }

  async appPolicy(appId: string): Promise<AppQuotaPolicy | undefined> {
    const row = await this.prisma.app.findFirst({ where: { id: appId, deletedAt: null }, select: POLICY_COLUMNS });
    return row ? toAppPolicy(row) : undefined;
  }
}
