import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { CONTENT_TYPES } from '@tally/recordings';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { isFile, type StaticFileHeaders } from '../common/static-files.js';
import { RecordingStorage } from './recording-storage.js';
import { RecordingsService } from './recordings.service.js';
import { presignS3Get } from './s3-presign.js';

/** How long a download link to a bucket object stays valid. */
const S3_LINK_TTL_S = 900;

export type FileResponse =
  Readonly<{ kind: 'file'; root: string; file: string; headers: StaticFileHeaders }> | Readonly<{ kind: 'redirect'; url: string }>;

/** Serves a complete recording: local files (ranges by @fastify/static), bucket objects by a short-lived signed link. */
@Injectable()
export class RecordingFileService {
  constructor(
    private readonly recordings: RecordingsService,
    private readonly storage: RecordingStorage,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async open(appId: string, recordingId: string): Promise<FileResponse> {
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
    const root = this.storage.files.dir;
    if (!(await isFile(root, recording.location))) throw new DomainError('not_found', 'the recording file is missing from storage');
    const extension = recording.location.split('.').pop() ?? '';
    return {
      kind: 'file',
      root,
      file: recording.location,
      headers: {
        'content-type': CONTENT_TYPES[extension] ?? 'application/octet-stream',
        'content-disposition': `attachment; filename="${recording.id}.${extension}"`,
        // Revalidated (ETag / Last-Modified) rather than kept: the response is per key.
        'cache-control': 'private, no-cache',
      },
    };
  }
}
