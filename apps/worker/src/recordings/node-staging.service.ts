import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { type RecordingStaged, stagingKey } from '@tally/contracts';
import { FinaliseQueue, RecordingFiles, RecordingObjects, StagingQueue } from '@tally/recordings';
import { RecordingRowsRepository } from './recording-rows.repository.js';

/**
 * With object storage on, a node that records without the origin's recordings directory stages
 * what its egress wrote in the bucket (`incoming/<location>`): the finaliser asks the node for the
 * files it lacks, the node's report queues the finalisation again, and the staged objects are
 * fetched into the incoming area, where the finaliser works as it does for files written here
 * (docs/adr/0033-nodes-stage-recordings-in-the-bucket.md).
 */
@Injectable()
export class NodeStaging implements OnModuleDestroy {
  private readonly logger = new Logger(NodeStaging.name);
  private readonly files: RecordingFiles;
  private readonly objects: RecordingObjects | undefined;

  constructor(
    private readonly queue: StagingQueue,
    private readonly finalise: FinaliseQueue,
    private readonly rows: RecordingRowsRepository,
    @Inject(CONFIG) config: Config,
  ) {
    this.files = new RecordingFiles(config.recordings.dir);
    this.objects = config.recordings.s3 ? new RecordingObjects(config.recordings.s3) : undefined;
  }

  get enabled(): boolean {
    return this.objects !== undefined;
  }

  /**
   * Brings each staged location into the incoming area (a copy checked against the object's size,
   * renamed into place), leaving files already here alone.
   * @returns the locations neither here nor staged
   */
  async fetch(locations: readonly string[]): Promise<string[]> {
    const objects = this.objects;
    if (!objects) return [...locations];
    const absent: string[] = [];
    for (const location of locations) {
      const path = this.files.incomingPath(location);
      if (await isFile(path)) continue;
      const key = stagingKey(location);
      const sizeBytes = await objects.sizeOf(key);
      if (sizeBytes === undefined) {
        absent.push(location);
        continue;
      }
      await mkdir(dirname(path), { recursive: true });
      const partial = `${path}.partial`;
      await objects.get(key, partial);
      const fetched = (await stat(partial)).size;
      if (fetched !== sizeBytes) {
        await rm(partial, { force: true });
        throw new Error(`fetched ${fetched} bytes of the staged ${key}, which holds ${sizeBytes}`);
      }
      await rename(partial, path);
      this.logger.log(`fetched the staged ${location} (${sizeBytes} bytes)`);
    }
    return absent;
  }

  /** Asks the node the recording ran on to stage these files, and to delete those of replaced attempts. */
  async request(nodeId: string, recordingId: string, locations: readonly string[], discard: readonly string[] = []): Promise<void> {
    await this.queue.request(nodeId, { recordingId, locations: [...locations], discard: [...discard] });
    this.logger.log(`asked node ${nodeId} to stage ${locations.join(', ')}`);
  }

  /** The node staged what it had: the recording is finalised from the bucket. */
  async applyReport(report: RecordingStaged): Promise<void> {
    // The reporting node is the queue's (checked by the consumer); only the recording's own node speaks for its files.
    const recording = await this.rows.get(report.recordingId);
    if (recording?.nodeId !== report.nodeId) {
      this.logger.warn(`node ${report.nodeId} reported staging recording ${report.recordingId}, which is not its own: ignored`);
      return;
    }
    if (report.missing.length > 0) this.logger.warn(`node ${report.nodeId} has no file for ${report.missing.join(', ')}`);
    await this.finalise.enqueueAfterStaging(report.recordingId);
  }

  /** Once the recording is complete (or failed, its files here), the staged copies go; one left behind is only space. */
  async removeStaged(locations: readonly string[]): Promise<void> {
    const objects = this.objects;
    if (!objects) return;
    for (const location of locations) {
      await objects.remove(stagingKey(location)).catch((error: unknown) => {
        this.logger.warn(`could not delete the staged ${location}: ${String(error)}`);
      });
    }
  }

  onModuleDestroy(): void {
    this.objects?.close();
  }
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}
