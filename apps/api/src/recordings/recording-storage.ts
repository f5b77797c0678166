import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import type { EgressDestination } from '@tally/livekit';
import { egressDestination, RecordingFiles } from '@tally/recordings';

/** Where egress writes a recording: the local recordings directory, or the configured S3 bucket. */
@Injectable()
export class RecordingStorage {
  readonly files: RecordingFiles;

  constructor(@Inject(CONFIG) private readonly config: Config) {
    this.files = new RecordingFiles(config.recordings.dir);
  }

  get kind(): 'local' | 's3' {
    return this.config.recordings.s3 ? 's3' : 'local';
  }

  /** `location` is `<appId>/<recordingId>.<ext>`: a path under the directory, or the object key. */
  destination(location: string): EgressDestination {
    return egressDestination(this.config.recordings, location);
  }
}
