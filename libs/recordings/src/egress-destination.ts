import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '@tally/config';
import type { EgressDestination } from '@tally/livekit';
import { RecordingFiles } from './recording-files.js';

/** `location` is `<appId>/<file>`: a path under the incoming area of the recordings directory, or the object key. */
export function egressDestination(recordings: Config['recordings'], location: string): EgressDestination {
  const s3 = recordings.s3;
  if (!s3) {
    const path = new RecordingFiles(recordings.dir).incomingPath(location);
    // Egress does not create directories. Made here, in the shared recordings directory, they stay
    // writable by its group: egress (the media user) writes into them, the worker moves files out.
    mkdirSync(dirname(path), { recursive: true });
    return { kind: 'file', path };
  }
  return { kind: 's3', key: location, ...s3 };
}
