import { join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { type DiskLevel, finalisationBytes, planDiskStop } from '@tally/capacity';
import { CONFIG, type Config } from '@tally/config';
import { type RecordingEndReason } from '@tally/contracts';
import { RecordingFiles, RecordingLifecycle, RecordingStopper } from '@tally/recordings';
import { MediaStopper } from '../reconcile/media-stopper.js';
import { DiskStats, type FilesystemStats } from './disk-stats.js';
import { DiskWritersRepository, type OpenRecording } from './disk-writers.repository.js';

const REASON: RecordingEndReason = 'disk_full';
/** Held in the recordings directory, beside the app directories; never a recording (no app id is dot-named). */
export const RESERVE_FILE = '.disk-reserve';

type Role = 'recordings' | 'hls';
type MediaFilesystem = FilesystemStats & Readonly<{ roles: ReadonlySet<Role> }>;

export type DiskCheckReport = Readonly<{
  levels: Readonly<Partial<Record<Role, DiskLevel>>>;
  recordingsStopped: number;
  hlsStopped: number;
  reserveReleased: number;
  reserveWritten: number;
}>;

/**
 * The disk watermark: each filesystem Tally writes media to (the recordings directory, where egress
 * writes with object storage on too, and live HLS), compared with its watermarks. Once the joins to come no
 * longer fit above the stop watermark, every recording written there is stopped through its
 * lifecycle, noted `endReason: disk_full`, and finalised like any stopped recording (the reserve
 * file is released so the joins have room); live HLS sessions there are stopped. Every step is
 * idempotent: a check that died half-way is finished by the next one.
 */
@Injectable()
export class DiskWatermarkCheck {
  private readonly logger = new Logger(DiskWatermarkCheck.name);
  private readonly files: RecordingFiles;
  /** The check in progress in this process: a second one waits for it rather than racing it over the same files. */
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly disk: DiskStats,
    private readonly writers: DiskWritersRepository,
    private readonly lifecycle: RecordingLifecycle,
    private readonly stopper: RecordingStopper,
    private readonly media: MediaStopper,
    private readonly ledger: CapacityLedger,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.files = new RecordingFiles(config.recordings.dir);
  }

  run(now: Date): Promise<DiskCheckReport> {
    const next = this.running.then(() => this.check(now));
    this.running = next.catch(() => undefined);
    return next;
  }

  private async check(now: Date): Promise<DiskCheckReport> {
    const report = {
      levels: {} as Partial<Record<Role, DiskLevel>>,
      recordingsStopped: 0,
      hlsStopped: 0,
      reserveReleased: 0,
      reserveWritten: 0,
    };
    const recordings = await this.writers.openRecordings();
    // A stop decided before (the process may have died between the note and the stop) is carried out whatever the disk says now.
    for (const recording of recordings) {
      if (recording.endReason === REASON && (recording.status === 'starting' || recording.status === 'active')) {
        await this.stopper.stop(recording, now);
      }
    }
    for (const fs of await this.filesystems()) {
      const holdsRecordings = fs.roles.has('recordings');
      const reservePath = join(this.config.recordings.dir, RESERVE_FILE);
      const pendingBytes = holdsRecordings ? await this.pendingBytes(recordings) : 0;
      const reserveBytes = holdsRecordings ? await this.disk.size(reservePath) : 0;
      const plan = planDiskStop({ ...fs, reserveBytes, pendingBytes }, this.config.disk.watermarks, this.config.disk.reserveMaxBytes);
      for (const role of fs.roles) report.levels[role] = plan.level;
      if (plan.releaseReserve) {
        await this.disk.remove(reservePath);
        report.reserveReleased += 1;
      }
      if (plan.stopWriters) {
        this.logger.warn(
          `the ${[...fs.roles].join(' and ')} filesystem reached its stop watermark (${fs.freeBytes} bytes free of ${fs.totalBytes}, ${pendingBytes} to finalise): stopping its writers`,
        );
        if (holdsRecordings) report.recordingsStopped += await this.stopRecordings(recordings, now);
        if (fs.roles.has('hls')) report.hlsStopped += await this.stopHls(now);
      } else if (holdsRecordings && plan.createReserveBytes > 0) {
        await this.disk.writeReserve(reservePath, plan.createReserveBytes);
        report.reserveWritten += 1;
      }
    }
    return report;
  }

  /** The media directories, grouped by the filesystem they are on (one statfs answer per filesystem). */
  private async filesystems(): Promise<MediaFilesystem[]> {
    const dirs: Array<readonly [Role, string]> = [
      ['recordings', this.config.recordings.dir],
      ['hls', this.config.hls.dir],
    ];
    const found = new Map<number, FilesystemStats & { roles: Set<Role> }>();
    for (const [role, dir] of dirs) {
      const stats = await this.disk.filesystem(dir);
      if (!stats) continue;
      const known = found.get(stats.device) ?? { ...stats, roles: new Set<Role>() };
      known.roles.add(role);
      found.set(stats.device, known);
    }
    return [...found.values()];
  }

  /** What the open recordings' finalisations will still write: their joins, and the indexes egress writes on close. */
  private async pendingBytes(recordings: readonly OpenRecording[]): Promise<number> {
    let pending = 0;
    for (const recording of recordings) {
      const locations = recording.mode === 'passthrough' ? recording.egresses.map((e) => e.location) : [recording.location];
      let written = 0;
      for (const location of locations) written += await this.disk.size(this.files.incomingPath(location));
      pending += finalisationBytes(recording.mode, written);
    }
    return pending;
  }

  private async stopRecordings(recordings: readonly OpenRecording[], now: Date): Promise<number> {
    let stopped = 0;
    for (const recording of recordings) {
      // One with a reason noted already is being stopped (the loop at the top of run carries it out).
      if ((recording.status !== 'starting' && recording.status !== 'active') || recording.endReason !== null) continue;
      if (!(await this.lifecycle.noteEndReason(recording.id, REASON))) continue;
      await this.stopper.stop(recording, now);
      stopped += 1;
    }
    return stopped;
  }

  private async stopHls(now: Date): Promise<number> {
    let stopped = 0;
    const purgeAt = new Date(now.getTime() + this.config.hls.retentionS * 1000);
    for (const session of await this.writers.openHlsSessions()) {
      await this.media.stopEgress(session.egressId);
      if (await this.writers.stopHls(session.id, now, purgeAt, `${REASON}: the HLS filesystem reached its stop watermark`)) stopped += 1;
      await this.ledger.release(session.id);
    }
    return stopped;
  }
}
