import { Inject, Injectable, Logger } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { ladderReservationId, PassthroughEgresses, RecordingLifecycle } from '@tally/recordings';
import { CameraLifecycle, HlsLifecycle, IngressLifecycle, StreamLifecycle } from '@tally/streams';
import { AppFiles } from './app-files.js';
import { type AppLeftovers, AppTeardownRepository, type DeletedApp } from './app-teardown.repository.js';
import { MediaStopper } from './media-stopper.js';

const REASON = 'the app was deleted';

export type AppTeardownReport = Readonly<{
  workStopped: number;
  reservationsReleased: number;
  appsPurged: number;
}>;

/**
 * Finishes what DELETE /v1/apps/{id} started. Each sweep stops everything a deleted app still runs
 * (streams, recordings, ladders, HLS, ingresses, cameras), releases every reservation it holds
 * whoever took it, and, once the retention period has passed and a sweep found nothing left
 * running, deletes its files and its rows. Every step is idempotent.
 */
@Injectable()
export class AppTeardown {
  private readonly logger = new Logger(AppTeardown.name);

  constructor(
    private readonly repository: AppTeardownRepository,
    private readonly streams: StreamLifecycle,
    private readonly ingresses: IngressLifecycle,
    private readonly hls: HlsLifecycle,
    private readonly cameras: CameraLifecycle,
    private readonly recordings: RecordingLifecycle,
    private readonly passthrough: PassthroughEgresses,
    private readonly ledger: CapacityLedger,
    private readonly media: MediaStopper,
    private readonly files: AppFiles,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async run(now: Date): Promise<AppTeardownReport> {
    const apps = await this.repository.deletedApps();
    if (apps.length === 0) return { workStopped: 0, reservationsReleased: 0, appsPurged: 0 };
    let workStopped = 0;
    let appsPurged = 0;
    for (const app of apps) {
      const stopped = await this.stop(await this.repository.leftovers(app.id), now);
      workStopped += stopped;
      if (stopped === 0 && this.retentionOver(app, now)) {
        await this.files.remove(app.id);
        await this.repository.purge(app.id);
        appsPurged += 1;
      }
    }
    // Whatever still holds the apps' capacity (a viewer lease, a create that raced the delete) goes too.
    const deleted = new Set(apps.map((a) => a.id));
    let reservationsReleased = 0;
    for (const r of await this.ledger.list()) {
      if (deleted.has(r.appId) && (await this.ledger.release(r.id))) reservationsReleased += 1;
    }
    const report = { workStopped, reservationsReleased, appsPurged };
    if (workStopped + reservationsReleased + appsPurged > 0) this.logger.log(`deleted apps torn down ${JSON.stringify(report)}`);
    return report;
  }

  /** True once the app's files need no longer be kept. */
  private retentionOver(app: DeletedApp, now: Date): boolean {
    return now.getTime() - app.deletedAt.getTime() >= this.config.apps.retentionS * 1000;
  }

  /** Rows change before reservations are released, as everywhere: a crash in between leaks nothing the next sweep misses. */
  private async stop(left: AppLeftovers, now: Date): Promise<number> {
    for (const stream of left.streams) {
      await this.media.deleteRoom(stream.room);
      await this.streams.end(stream.id, now, 'app_deleted');
    }
    for (const recording of left.recordings) {
      // A passthrough recording has no egress of its own: one per track.
      if (recording.mode === 'passthrough') await this.passthrough.stopAll(recording.id);
      else await this.media.stopEgress(recording.egressId);
      await this.recordings.fail(recording.id, REASON, now);
    }
    for (const recording of left.ladders) {
      await this.repository.failLadder(recording.id);
      await this.ledger.release(ladderReservationId(recording.id));
    }
    for (const session of left.hls) await this.hls.finish(session, now);
    for (const ingress of left.ingresses) {
      await this.media.deleteIngress(ingress);
      await this.ingresses.deleted(ingress, now);
    }
    for (const cameraId of left.cameraIds) await this.cameras.delete(cameraId, now);
    return Object.values(left).reduce((n, rows: readonly unknown[]) => n + rows.length, 0);
  }
}
