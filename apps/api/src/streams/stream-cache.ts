import { Injectable } from '@nestjs/common';
import { CacheInvalidation, type Invalidation } from '@tally/runtime';
import { StreamsRepository } from './streams.repository.js';

/** What minting a join token needs of a stream: its room, and that it has not ended. */
export type OpenStream = Readonly<{ id: string; appId: string; room: string }>;

const MAX_ENTRIES = 10_000;
/** A backstop only: the end of a stream reaches every replica through CacheInvalidation. */
const TTL_MS = 30_000;

/**
 * Open streams by id, in process, for the token route (viewers arriving at a broadcast's start all
 * ask for the same stream). A stream's app and room never change; its end is published by whoever
 * ends it (API or worker) and evicts it on every replica. Ended streams are never cached.
 */
@Injectable()
export class StreamCache {
  private readonly entries = new Map<string, { stream: OpenStream; expiresAt: number }>();
  private generation = 0;

  constructor(
    private readonly streams: StreamsRepository,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onChange((change) => this.evict(change));
  }

  /** The open stream, `ended`, or undefined when the app has no such stream. */
  async findOpen(appId: string, streamId: string): Promise<OpenStream | 'ended' | undefined> {
    const now = Date.now();
    if (this.invalidation.live) {
      const hit = this.entries.get(streamId);
      if (hit && hit.expiresAt > now) return hit.stream.appId === appId ? hit.stream : undefined;
    }
    const generation = this.generation;
    const row = await this.streams.find(appId, streamId);
    if (!row) return undefined;
    if (row.status === 'ended') return 'ended';
    const stream: OpenStream = { id: row.id, appId: row.appId, room: row.room };
    if (generation === this.generation && this.invalidation.live) {
      this.entries.delete(streamId);
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(streamId, { stream, expiresAt: now + TTL_MS });
    }
    return stream;
  }

  private evict(change: Invalidation): void {
    if (change.kind === 'key' || change.kind === 'policy') return;
    this.generation += 1;
    if (change.kind === 'all') this.entries.clear();
    else if (change.kind === 'stream') this.entries.delete(change.streamId);
    else for (const [id, { stream }] of this.entries) if (stream.appId === change.appId) this.entries.delete(id);
  }
}
