import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Config } from '@tally/config';
import { ladderDirOf } from './ladder/ladder-lifecycle.js';

export type StoredRecording = Readonly<{ id: string; storage: string; location: string }>;

/**
 * The adapter in front of a recording's files, wherever they are: on local storage its file, its
 * ladder directory and any passthrough part left in `.incoming/`; on S3 its object (ladders are
 * always local). Removing what is already gone succeeds, so a retried delete finishes the job.
 */
export class RecordingFileStore {
  constructor(private readonly recordings: Config['recordings']) {}

  async remove(recording: StoredRecording): Promise<void> {
    const { dir, s3 } = this.recordings;
    if (recording.storage === 's3' && s3) await deleteObject(s3, recording.location);
    else await rm(join(dir, recording.location), { force: true });
    await rm(join(dir, ladderDirOf(recording.location)), { recursive: true, force: true });
    await this.removeParts(recording);
  }

  /** Passthrough parts (`<id>.video.h264`, `<id>.audio-1.ogg`, …) that were never joined. */
  private async removeParts(recording: StoredRecording): Promise<void> {
    const incoming = join(this.recordings.dir, '.incoming', dirname(recording.location));
    const names = await readdir(incoming).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.startsWith(`${recording.id}.`))) await rm(join(incoming, basename(name)), { force: true });
  }
}

/** The SDK is loaded only when an S3 recording is deleted (it is ~30 MB of idle memory otherwise). */
async function deleteObject(s3: NonNullable<Config['recordings']['s3']>, key: string): Promise<void> {
  const { S3Client, DeleteObjectCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    region: s3.region,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    forcePathStyle: s3.forcePathStyle,
    credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
  });
  try {
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
  } finally {
    client.destroy();
  }
}
