import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '@tally/config';
import type { EgressDestination } from '@tally/livekit';
import { RecordingFiles } from './recording-files.js';

/**
 * `location` is `<appId>/<file>`: egress writes it under the incoming area of the recordings
 * directory, whatever the storage; with object storage on, the worker uploads the checked file
 * (docs/adr/0027-recordings-uploaded-by-tally.md).
 */
export function egressDestination(recordings: Config['recordings'], location: string): EgressDestination {
  const path = new RecordingFiles(recordings.dir).incomingPath(location);
  // Egress does not create directories. Made here, in the shared recordings directory, they stay
  // writable by its group: egress (the media user) writes into them, the worker moves files out.
  mkdirSync(dirname(path), { recursive: true });
  return { kind: 'file', path };
}
