import { Injectable } from '@nestjs/common';
import { Admitter } from '@tally/admission';
import { RedisConnection } from '@tally/runtime';
import { IngressReconciler } from '../ingresses/ingress-reconciler.service.js';
import { EgressReconciler } from '../recordings/egress-reconciler.service.js';
import { HlsReconciler } from '../recordings/hls-reconciler.service.js';
import { LadderRestorer } from '../recordings/ladder-restorer.service.js';
import { RecordingLimits } from '../recordings/recording-limits.service.js';
import { RecordingUploader } from '../recordings/recording-uploader.service.js';
import { NodeDepartures } from '../recordings/node-departures.service.js';
import { AppTeardown } from '../reconcile/app-teardown.service.js';
import { CamerasReconciler } from '../reconcile/cameras-reconciler.service.js';
import { RedisLossDetector } from '../reconcile/redis-loss.js';
import { ReservationAuditor } from '../reconcile/reservation-auditor.service.js';
import { StreamsReconciler } from '../reconcile/streams-reconciler.service.js';
import { RepairCounter, type SweepReport } from './repair-counter.js';

/** One reconciliation sweep: every reconciler in turn, their repairs added to the running totals. */
@Injectable()
export class Sweep {
  private readonly repairs: RepairCounter;

  constructor(
    private readonly apps: AppTeardown,
    private readonly streams: StreamsReconciler,
    private readonly departures: NodeDepartures,
    private readonly egresses: EgressReconciler,
    private readonly hls: HlsReconciler,
    private readonly ladders: LadderRestorer,
    private readonly ingresses: IngressReconciler,
    private readonly cameras: CamerasReconciler,
    private readonly audit: ReservationAuditor,
    private readonly admitter: Admitter,
    private readonly redisLoss: RedisLossDetector,
    private readonly limits: RecordingLimits,
    private readonly uploads: RecordingUploader,
    redis: RedisConnection,
  ) {
    this.repairs = new RepairCounter(redis);
  }

  async run(now: Date): Promise<SweepReport> {
    // First: whether Redis lost its data, so nothing below ends work for state that was lost with it.
    const loss = await this.redisLoss.observe(now);
    // Deleted apps first: what they ran is stopped and released before anything is judged or restored.
    const apps = await this.apps.run(now);
    const streams = await this.streams.run(now, loss);
    // Departures first, so a recording lost with its node fails with that reason, not "egress vanished";
    // the length and retention limits before the egress reconciler, which then sees the stops they asked for.
    const recordings = {
      ...(await this.departures.run(now)),
      ...(await this.limits.run(now)),
      ...(await this.egresses.run(now, loss)),
    };
    // Complete recordings still on local storage with object storage on: their uploads are queued again.
    await this.uploads.requeue();
    const report = {
      apps,
      streams,
      recordings,
      hls: await this.hls.run(now, loss),
      ladders: await this.ladders.run(),
      ingresses: await this.ingresses.run(now, loss),
      cameras: await this.cameras.run(now),
      quotas: { guaranteesRestored: await this.admitter.restoreGuaranteePolicies() },
      // Last: what the reconcilers above left held for an owner that is gone or finished.
      reservations: await this.audit.run(now),
    };
    // Counted only when something had to be restored: a first sweep on a new Redis is no loss.
    const restored =
      streams.reservationsRestored +
      recordings.reservationsRestored +
      report.hls.reservationsRestored +
      report.ladders.reservationsRestored +
      report.ingresses.reservationsRestored +
      report.ingresses.workRetained +
      report.cameras.reservationsRestored +
      report.quotas.guaranteesRestored;
    const withLoss = { redis: { dataLost: (await this.redisLoss.settle(loss, restored)) ? 1 : 0 }, ...report };
    await this.repairs.add(withLoss);
    return withLoss;
  }
}
