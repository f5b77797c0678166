import { Injectable } from '@nestjs/common';
import { CacheInvalidation, cacheOnBus, type InvalidatedCache } from '@tally/runtime';
import { StreamsRepository } from './streams.repository.js';

/** What minting a join token needs of a stream: its room, and that it has not ended. */
export type OpenStream = Readonly<{ id: string; appId: string; room: string }>;

/**
 * Open streams by id, in process, for the token route (viewers arriving at a broadcast's start all
 * ask for the same stream). A stream's app and room never change; its end is published by whoever
 * ends it (API or worker) and evicts it on every replica. Ended streams are never cached.
 */
@Injectable()
export class StreamCache {
  private readonly cache: InvalidatedCache<OpenStream>;

  constructor(
    private readonly streams: StreamsRepository,
    invalidation: CacheInvalidation,
  ) {
    // The TTL is a backstop only: the end of a stream reaches every replica through the bus.
    this.cache = cacheOnBus<OpenStream>(invalidation, { max: 10_000, ttlMs: 30_000 }, (cache, change) => {
      if (change.kind === 'all') cache.forgetAll();
      else if (change.kind === 'stream') cache.forget(change.streamId);
      else if (change.kind === 'app') cache.forgetWhere((stream) => stream.appId === change.appId);
    });
  }

  /** The open stream when this process holds it (no promise, no query), else undefined: ask findOpen. */
  cached(appId: string, streamId: string): OpenStream | undefined {
    const hit = this.cache.get(streamId);
    return hit?.appId === appId ? hit : undefined;
  }

  /** The open stream, `ended`, or undefined when the app has no such stream. */
  async findOpen(appId: string, streamId: string): Promise<OpenStream | 'ended' | undefined> {
    const hit = this.cache.get(streamId);
    if (hit) return hit.appId === appId ? hit : undefined;
    const generation = this.cache.begin();
    const row = await this.streams.find(appId, streamId);
    if (!row) return undefined;
    if (row.status === 'ended') return 'ended';
    const stream: OpenStream = { id: row.id, appId: row.appId, room: row.room };
    this.cache.remember(streamId, stream, generation);
    return stream;
  }
}
