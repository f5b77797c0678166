import { Injectable } from '@nestjs/common';
import { EGRESS_MODES } from '@tally/capacity';
import { Counter, Gauge } from 'prom-client';
import { Clock } from '../common/clock.js';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';
import { MetricsRepository } from './metrics.repository.js';

const RECORDING_MODES = EGRESS_MODES;
const FINISHED = ['complete', 'failed'] as const;

/** Finished recordings, read from Postgres at scrape: totals by outcome, and last-24 h sums of completed ones. */
@Injectable()
export class RecordingsCollector {
  constructor(repository: MetricsRepository, clock: Clock, metrics: MetricsRegistry) {
    const registers = [metrics.registry];
    const completed = metrics.perScrape(() => repository.completedSince(clock.now()));
    new Counter({
      name: METRICS.recordingsFinished,
      help: 'Recordings that ended, by egress mode and outcome (complete, failed); counted from the recordings table',
      labelNames: ['mode', 'outcome'] as const,
      registers,
      async collect() {
        const rows = await repository.finishedRecordings();
        this.reset();
        for (const mode of RECORDING_MODES) for (const outcome of FINISHED) this.inc({ mode, outcome }, 0);
        for (const r of rows) this.inc({ mode: r.mode, outcome: r.status }, r.count);
      },
    });
    const last24h = (name: string, help: string, pick: (r: Awaited<ReturnType<typeof completed>>[number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['mode'] as const,
        registers,
        async collect() {
          const rows = await completed();
          this.reset();
          for (const mode of RECORDING_MODES) this.set({ mode }, pick(rows.find((r) => r.mode === mode) ?? EMPTY));
        },
      });
    last24h(METRICS.recordingsCompleted24h, 'Recordings completed in the last 24 h, by egress mode', (r) => r.count);
    last24h(METRICS.recordingDuration24h, 'Total duration of the recordings completed in the last 24 h (seconds)', (r) => r.durationS);
    last24h(METRICS.recordingSize24h, 'Total size of the recordings completed in the last 24 h (bytes)', (r) => r.sizeBytes);
  }
}

const EMPTY = { mode: '', count: 0, durationS: 0, sizeBytes: 0 };
