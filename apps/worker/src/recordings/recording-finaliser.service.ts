import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { LadderLifecycle, RecordingFiles, RecordingLifecycle } from '@tally/recordings';
import { Clock } from '../clock.js';
import { ffprobe } from './ffprobe.js';
import { NodeStaging } from './node-staging.service.js';
import { PassthroughJoiner, replacedAttempts } from './passthrough-joiner.js';
import { RecordingRowsRepository } from './recording-rows.repository.js';
import { RecordingUploader } from './recording-uploader.service.js';

/** A passthrough egress in one of these states may still write its file. */
const WRITING = ['starting', 'active', 'ending'];

export type FinaliseOutcome = 'completed' | 'failed' | 'skipped' | 'waiting';

/**
 * Turns an egress's finished output into a complete recording: probe it (a file with no audio or
 * video is a failed recording), checksum it, and move it from the incoming area into the app's
 * directory; with object storage on, queue its upload. Safe to run again after a crash at any step.
 * With object storage on, files egress wrote on a node without this directory are staged by that
 * node in the bucket and fetched here first (NodeStaging).
 */
@Injectable()
export class RecordingFinaliser {
  private readonly logger = new Logger(RecordingFinaliser.name);
  private readonly files: RecordingFiles;
  private readonly joiner: PassthroughJoiner;

  constructor(
    private readonly rows: RecordingRowsRepository,
    private readonly lifecycle: RecordingLifecycle,
    private readonly ladders: LadderLifecycle,
    private readonly clock: Clock,
    private readonly uploader: RecordingUploader,
    private readonly staging: NodeStaging,
    @Inject(CONFIG) config: Config,
  ) {
    this.files = new RecordingFiles(config.recordings.dir);
    this.joiner = new PassthroughJoiner(this.files);
  }

  /** `staged`: the recording's node has staged what it had; what is still absent is absent. */
  async finalise(recordingId: string, staged = false): Promise<FinaliseOutcome> {
    const recording = await this.rows.get(recordingId);
    if (!recording || recording.status !== 'ending') return 'skipped';

    if (recording.storage === 's3') {
      // Recorded by an egress that uploaded the object itself: its own report of the file is what Tally can know.
      const done = await this.lifecycle.complete(recordingId, {
        location: recording.location,
        sizeBytes: Number(recording.sizeBytes ?? 0),
        durationS: recording.durationS ?? 0,
        sha256: null,
        codecs: null,
      });
      return done ? 'completed' : 'skipped';
    }

    const incoming = this.files.incomingPath(recording.location);
    const final = this.files.finalPath(recording.location);
    const parts = recording.mode === 'passthrough' ? await this.rows.parts(recordingId) : [];
    if (parts.some((p) => WRITING.includes(p.state))) return 'skipped';
    const written = recording.mode === 'passthrough' ? parts.map((p) => p.location) : [recording.location];
    if (this.staging.enabled && !(await exists(incoming)) && !(await exists(final))) {
      const absent = await this.staging.fetch(written).catch((error: unknown) => error as Error);
      // The store is away: the node keeps its files and retries until it is back, then reports again.
      if (absent instanceof Error) this.logger.warn(`cannot fetch the staged files of ${recordingId} yet: ${absent.message}`);
      if (absent instanceof Error || (absent.length > 0 && !staged)) {
        await this.staging.request(recording.nodeId, recordingId, absent instanceof Error ? written : absent, replacedAttempts(parts));
        return 'waiting';
      }
    }
    // A passthrough recording's tracks are joined into the incoming file first (unless a run before a crash did).
    if (recording.mode === 'passthrough' && !(await exists(incoming)) && !(await exists(final))) {
      const app = await this.rows.app(recording.appId);
      const joined = await this.joiner.join(recording, parts, app?.recordingFormat === 'source_opus');
      if (!joined.ok) return this.fail(recordingId, joined.reason);
    }
    const source = (await exists(incoming)) ? incoming : (await exists(final)) ? final : undefined;
    if (!source) return this.fail(recordingId, 'egress produced no file');

    const probe = await ffprobe(source).catch((error: unknown) => error as Error);
    if (probe instanceof Error) return this.fail(recordingId, `the file is unreadable: ${probe.message.split('\n')[0] ?? ''}`);
    if (probe.codecs.length === 0) return this.fail(recordingId, 'the file has no audio or video');

    const sha256 = await sha256File(source);
    const sizeBytes = (await stat(source)).size;
    if (source === incoming) await moveFile(incoming, final);
    const done = await this.lifecycle.complete(recordingId, {
      location: recording.location,
      sizeBytes,
      durationS: probe.durationS ?? recording.durationS ?? 0,
      sha256,
      codecs: probe.codecs,
    });
    if (!done) return 'skipped';
    await this.joiner.removeParts(parts);
    await this.staging.removeStaged(written);
    this.logger.log(`recording ${recordingId} complete: ${sizeBytes} bytes, ${probe.durationS ?? '?'} s`);
    await this.ladderIfWanted(recordingId);
    // With object storage on, the checked file goes to the bucket next (the recording is complete meanwhile).
    await this.uploader.request(recordingId);
    return 'completed';
  }

  /** The app's `transcodeLadder` setting: a ladder for every complete recording with video. */
  private async ladderIfWanted(recordingId: string): Promise<void> {
    const recording = await this.rows.withApp(recordingId);
    if (!recording?.app.transcodeLadder) return;
    try {
      const outcome = await this.ladders.requestForApp(recording);
      if (!outcome.ok)
        this.logger.warn(`no ladder for ${recordingId}: ${outcome.reason === 'refused' ? outcome.refusal.resource : outcome.message}`);
    } catch (error) {
      // The recording is complete either way; the app can still ask for its ladder.
      this.logger.error(`could not start the ladder of ${recordingId}: ${String(error)}`);
    }
  }

  async fail(recordingId: string, reason: string): Promise<FinaliseOutcome> {
    return (await this.lifecycle.fail(recordingId, reason, this.clock.now())) ? 'failed' : 'skipped';
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A rename where possible; across filesystems, a copy that is complete before the source goes. */
async function moveFile(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(from, `${to}.partial`);
    await rename(`${to}.partial`, to);
    await unlink(from);
  }
}
