import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { LivekitEgressClient } from '@tally/livekit';
import { HlsLifecycle } from '@tally/streams';
import { Clock } from '../common/clock.js';
import { HlsRepository } from './hls.repository.js';

const FAILED_EGRESS = new Set(['failed', 'aborted', 'limit_reached', 'complete']);

/**
 * Moves HLS sessions along without waiting for a request: starting → live once egress wrote the
 * playlist (or failed when egress gave up), open → stopped when the stream ended, and deletes the
 * segments once the retention period after the stop has passed. Every step is idempotent, so each
 * API replica may run it.
 */
@Injectable()
export class HlsJanitor implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(HlsJanitor.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly sessions: HlsRepository,
    private readonly lifecycle: HlsLifecycle,
    private readonly egress: LivekitEgressClient,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  onModuleInit(): void {
    const everyMs = Math.max(500, Math.min(5_000, (this.config.hls.retentionS * 1000) / 2));
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .catch((error: unknown) => this.logger.warn(`HLS sweep failed: ${String(error)}`))
        .finally(() => (this.running = undefined));
    }, everyMs);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  async sweep(): Promise<void> {
    const now = this.clock.now();
    await this.promoteStarting();
    for (const { session, endedAt } of await this.sessions.openOfEndedStreams()) await this.lifecycle.finish(session, endedAt);
    for (const session of await this.sessions.due(now)) await this.lifecycle.purge(session, now);
  }

  private async promoteStarting(): Promise<void> {
    const starting = await this.sessions.starting();
    if (starting.length === 0) return;
    const egresses = new Map((await this.egress.list({ activeOnly: false }).catch(() => [])).map((e) => [e.egressId, e]));
    for (const session of starting) {
      const playlist = await access(join(session.dir, 'index.m3u8')).then(
        () => true,
        () => false,
      );
      if (playlist) {
        await this.lifecycle.promote(session.id);
        continue;
      }
      const egress = session.egressId ? egresses.get(session.egressId) : undefined;
      if (egress && FAILED_EGRESS.has(egress.state)) {
        const now = this.clock.now();
        const error = egress.error ?? `egress ended (${egress.state}) before writing a playlist`;
        await this.lifecycle.fail(session, error, now);
      }
    }
  }
}
