import { createReadStream, type ReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { CONTENT_TYPES } from '@tally/recordings';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { RecordingStorage } from './recording-storage.js';
import { RecordingsService } from './recordings.service.js';
import { presignS3Get } from './s3-presign.js';

/** How long a download link to a bucket object stays valid. */
const S3_LINK_TTL_S = 900;

export type FileResponse =
  | Readonly<{
      kind: 'stream';
      status: 200 | 206;
      headers: Record<string, string>;
      body: ReadStream;
    }>
  | Readonly<{ kind: 'redirect'; url: string }>
  | Readonly<{ kind: 'unsatisfiable'; size: number }>;

/** Serves a complete recording: local files with HTTP range support, bucket objects by a short-lived signed link. */
@Injectable()
export class RecordingFileService {
  constructor(
    private readonly recordings: RecordingsService,
    private readonly storage: RecordingStorage,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async open(appId: string, recordingId: string, range: string | undefined): Promise<FileResponse> {
    const recording = await this.recordings.require(appId, recordingId);
    if (recording.status !== 'complete') {
      throw new DomainError('conflict', `the recording is ${recording.status}; its file is served once it is complete`, {
        status: recording.status,
      });
    }
    const s3 = this.config.recordings.s3;
    if (recording.storage === 's3' && s3) {
      return { kind: 'redirect', url: await presignS3Get(s3, recording.location, this.clock.now(), S3_LINK_TTL_S) };
    }
    const path = this.storage.files.finalPath(recording.location);
    const size = (await stat(path).catch(() => undefined))?.size;
    if (size === undefined) throw new DomainError('not_found', 'the recording file is missing from storage');
    const extension = recording.location.split('.').pop() ?? '';
    const headers: Record<string, string> = {
      'content-type': CONTENT_TYPES[extension] ?? 'application/octet-stream',
      'accept-ranges': 'bytes',
      'content-disposition': `attachment; filename="${recording.id}.${extension}"`,
    };
    const parsed = parseRange(range, size);
    if (parsed === 'unsatisfiable') return { kind: 'unsatisfiable', size };
    if (parsed === undefined) {
      return { kind: 'stream', status: 200, headers: { ...headers, 'content-length': String(size) }, body: createReadStream(path) };
    }
    return {
      kind: 'stream',
      status: 206,
      headers: {
        ...headers,
        'content-length': String(parsed.end - parsed.start + 1),
        'content-range': `bytes ${parsed.start}-${parsed.end}/${size}`,
      },
      body: createReadStream(path, parsed),
    };
  }
}

/** One `bytes=` range (the form players send); several ranges are answered with the whole file. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = header?.trim().match(/^bytes=(\d*)-(\d*)$/);
  if (!match) return undefined;
  const [, from = '', to = ''] = match;
  if (from === '' && to === '') return undefined;
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}
