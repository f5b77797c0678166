import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import type { EgressDestination } from '@tally/livekit';
import { egressDestination, RecordingFiles } from '@tally/recordings';

/**
 * Where egress writes a recording: the local recordings directory, always. With object storage on,
 * the worker uploads the complete recording and the row's `storage` becomes `s3` once it is verified.
 */
@Injectable()
export class RecordingStorage {
  readonly files: RecordingFiles;

  constructor(@Inject(CONFIG) private readonly config: Config) {
    this.files = new RecordingFiles(config.recordings.dir);
  }

  /** `location` is `<appId>/<recordingId>.<ext>`: a path under the directory, and later the object key. */
  destination(location: string): EgressDestination {
    return egressDestination(this.config.recordings, location);
  }
}
