import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { finalisationBytes } from '@tally/capacity';
import { type NodeList, QUEUES, type RecordingView } from '@tally/contracts';
import { type ApiClient, waitFor } from '@tally/testing';
import { Queue } from 'bullmq';

const run = promisify(execFile);

/** A small tmpfs for the recordings directory, which another process can fill; egress, the API and the worker all see it. */
export type SmallDisk = Readonly<{
  dir: string;
  totalBytes(): number;
  /** Another process takes the disk's space, leaving `freeBytes` (as statfs counts it) free. */
  fillLeaving(freeBytes: number): Promise<void>;
  /** That other process gives the space back. */
  emptyFillers(): void;
  /** What the worker counts as still to be written by finalising the recording now. */
  pendingOf(recording: RecordingView): number;
  unmount(): void;
}>;

export function mountSmallDisk(sizeBytes: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'tally-disk-e2e-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir]);
  const freeBytes = () => statfsSync(dir).bavail * statfsSync(dir).bsize;
  return {
    dir,
    totalBytes: () => statfsSync(dir).blocks * statfsSync(dir).bsize,
    async fillLeaving(leave) {
      const take = Math.max(0, freeBytes() - leave);
      if (take > 0) await run('fallocate', ['-l', String(take), join(dir, `filler-${Date.now()}`)]);
    },
    emptyFillers() {
      for (const name of readdirSync(dir)) if (name.startsWith('filler-')) rmSync(join(dir, name));
    },
    pendingOf(recording) {
      const incoming = join(dir, '.incoming', recording.appId);
      const written = readdirSync(incoming)
        .filter((name) => name.startsWith(recording.id))
        .reduce((sum, name) => sum + statSync(join(incoming, name)).size, 0);
      return finalisationBytes(recording.mode, written);
    },
    unmount() {
      execFileSync('umount', ['--lazy', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Resolves once the agent reports the recordings filesystem above its alert line: admission decides
 * on that report (a heartbeat old), not on the filesystem itself.
 */
export async function reportedClear(admin: ApiClient): Promise<void> {
  await waitFor(
    'the agent to report the recordings disk clear',
    async () => {
      const disks = (await admin.get<NodeList>('/v1/nodes')).body.items.flatMap((n) => n.disks);
      const recordings = disks.find((d) => d.roles.includes('recordings'));
      return recordings !== undefined && recordings.freeBytes > recordings.alertFreeBytes ? true : undefined;
    },
    30_000,
  );
}

export type CheckReport = Readonly<{ levels: Readonly<{ recordings?: string }> }>;

/** The worker's disk watermark checks, as their BullMQ jobs report them. */
export type WatermarkChecks = Readonly<{
  /** The report of a check that began after `after` (ms). */
  after(after: number): Promise<CheckReport>;
  close(): Promise<void>;
}>;

export function watermarkChecks(redisUrl: string): WatermarkChecks {
  const checks = new Queue(QUEUES.disk, { connection: { url: redisUrl, maxRetriesPerRequest: null } });
  return {
    after: (after) =>
      waitFor(
        'a disk watermark check after the fill',
        async () => {
          const done = await checks.getJobs(['completed'], 0, 50);
          const later = done.find((j) => j.processedOn !== undefined && j.processedOn > after);
          return later?.returnvalue as CheckReport | undefined;
        },
        30_000,
      ),
    close: () => checks.close(),
  };
}
