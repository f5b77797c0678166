import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { LivekitEgressClient } from '@tally/livekit';
import { HlsLifecycle } from '@tally/streams';
import { Clock } from '../clock.js';
import { HlsSessionsRepository } from './hls-sessions.repository.js';

const FAILED_EGRESS = new Set(['failed', 'aborted', 'limit_reached', 'complete']);

/** Sessions this run acted on (a step another run already took changes nothing). */
export type HlsSweepReport = Readonly<{ promoted: number; failed: number; finished: number; purged: number }>;

/**
 * Moves HLS sessions along without waiting for a request: starting → live once egress wrote the
 * playlist (or failed when egress gave up), open → stopped when the stream ended, and deletes the
 * segments once the retention period after the stop has passed. Every step is a conditional
 * transition, so a run that overlaps another changes nothing twice.
 */
@Injectable()
export class HlsJanitor {
  constructor(
    private readonly sessions: HlsSessionsRepository,
    private readonly lifecycle: HlsLifecycle,
    private readonly egress: LivekitEgressClient,
    private readonly clock: Clock,
  ) {}

  async sweep(): Promise<HlsSweepReport> {
    const report = { promoted: 0, failed: 0, finished: 0, purged: 0 };
    await this.promoteStarting(report);
    for (const { session, endedAt } of await this.sessions.openOfEndedStreams()) {
      await this.lifecycle.finish(session, endedAt);
      report.finished += 1;
    }
    const now = this.clock.now();
    for (const session of await this.sessions.due(now)) {
      await this.lifecycle.purge(session, now);
      report.purged += 1;
    }
    return report;
  }

  private async promoteStarting(report: { promoted: number; failed: number }): Promise<void> {
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
        report.promoted += 1;
        continue;
      }
      const egress = session.egressId ? egresses.get(session.egressId) : undefined;
      if (egress && FAILED_EGRESS.has(egress.state)) {
        const error = egress.error ?? `egress ended (${egress.state}) before writing a playlist`;
        if (await this.lifecycle.fail(session, error, this.clock.now())) report.failed += 1;
      }
    }
  }
}
