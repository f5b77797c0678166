import type { CapacityLedger } from '@tally/admission';
import type { Invalidation } from '@tally/contracts';
import type { Prisma, PrismaClient } from '@tally/db';
import { toStreamView, type WebhookOutbox } from '@tally/webhooks';

type Transition = Readonly<{ where: Prisma.StreamWhereInput; data: Prisma.StreamUpdateManyMutationInput }>;

export type StreamCounts = Readonly<{ participants: number; publishers: number }>;

/** Tells every process's in-process caches what to drop (RuntimeModule's CacheInvalidation). */
export type InvalidationSink = Readonly<{ publish(change: Invalidation): Promise<void> }>;

/**
 * The stream state machine, shared by the API (DELETE, LiveKit webhooks) and the worker (sweeps,
 * app teardown). Every transition is a conditional update written with its app event in one
 * transaction (the event is delivered after commit); capacity is given back only after the row
 * says so, and every process stops minting tokens for an ended stream from its cache.
 */
export class StreamLifecycle {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly ledger: CapacityLedger,
    private readonly outbox: WebhookOutbox,
    private readonly invalidation: InvalidationSink,
  ) {}

  /** True when this call turned a created stream live; the app's stream.live event is staged with it. */
  markLive(id: string, at: Date, counts: StreamCounts): Promise<boolean> {
    return this.transition({ where: { id, status: 'created' }, data: { status: 'live', startedAt: at, ...counts } }, 'stream.live');
  }

  async setPresence(id: string, counts: StreamCounts): Promise<void> {
    await this.prisma.stream.updateMany({ where: { id, status: { not: 'ended' } }, data: counts });
  }

  /**
   * Ends the stream, then gives its reservation back. The row changes before the reservation is
   * released: a crash in between holds capacity too long (the sweep frees it), never frees it too
   * early. True when this call ended it; ending twice is harmless.
   */
  async end(id: string, at: Date, reason: string): Promise<boolean> {
    const ended = await this.markEnded(id, at, reason);
    await this.ledger.release(id);
    return ended;
  }

  /** True when this call ended the stream (it was not ended before); the app's stream.ended event is staged with it. */
  async markEnded(id: string, at: Date, reason: string): Promise<boolean> {
    const ended = await this.transition(
      {
        where: { id, status: { not: 'ended' } },
        data: { status: 'ended', endedAt: at, endReason: reason, participants: 0, publishers: 0 },
      },
      'stream.ended',
    );
    // Every process stops minting tokens for it from its cache.
    if (ended) await this.invalidation.publish({ kind: 'stream', streamId: id });
    return ended;
  }

  /** A conditional update and its event in one transaction, so the event exists exactly when the change does. */
  private async transition(change: Transition, event: 'stream.live' | 'stream.ended'): Promise<boolean> {
    const { changed, staged } = await this.prisma.$transaction(async (tx) => {
      const [stream] = await tx.stream.updateManyAndReturn(change);
      if (!stream) return { changed: false, staged: undefined };
      return { changed: true, staged: await this.outbox.stage(tx, stream.appId, event, toStreamView(stream)) };
    });
    await this.outbox.flush([staged]);
    return changed;
  }
}
