import { Injectable } from '@nestjs/common';
import type { RecordingView } from '@tally/contracts';
import { ladderDirOf, LadderLifecycle, toRecordingView } from '@tally/recordings';
import { LADDER_CONTENT_TYPES } from '@tally/transcode';
import { refusalError } from '../capacity/refusal.js';
import { DomainError } from '../common/domain-error.js';
import { isFile, type StaticFileHeaders } from '../common/static-files.js';
import { RecordingStorage } from './recording-storage.js';
import { RecordingsService } from './recordings.service.js';

export type LadderFile = Readonly<{ root: string; file: string; headers: StaticFileHeaders }>;

/** A recording's VOD ladder: asked for here, admitted and run by the node agents, served from the recordings directory. */
@Injectable()
export class LadderService {
  constructor(
    private readonly recordings: RecordingsService,
    private readonly ladders: LadderLifecycle,
    private readonly storage: RecordingStorage,
  ) {}

  /** 202 with the recording once admitted (or when a ladder is already queued, running or ready). */
  async request(appId: string, recordingId: string): Promise<RecordingView> {
    const outcome = await this.ladders.request(await this.recordings.require(appId, recordingId));
    if (outcome.ok) return toRecordingView(outcome.recording);
    if (outcome.reason === 'refused') throw refusalError(outcome.refusal);
    throw new DomainError('conflict', outcome.message, { reason: outcome.reason });
  }

  async open(appId: string, recordingId: string, file: string): Promise<LadderFile> {
    const recording = await this.recordings.require(appId, recordingId);
    if (recording.ladderStatus !== 'ready') {
      throw new DomainError(
        'conflict',
        `the ladder is ${recording.ladderStatus ?? 'not requested'}; its files are served once it is ready`,
        {
          ladderStatus: recording.ladderStatus,
        },
      );
    }
    // Checked from the recordings directory down: the ladder's own directory is media-writable too.
    const root = this.storage.files.dir;
    const path = `${ladderDirOf(recording.location)}/${file}`;
    if (!(await isFile(root, path))) throw new DomainError('not_found', `${file} is not part of this ladder`);
    const extension = file.split('.').pop() ?? '';
    return {
      root,
      file: path,
      headers: {
        'content-type': LADDER_CONTENT_TYPES[extension] ?? 'application/octet-stream',
        // Segments never change once the ladder is ready; a remade ladder keeps the names, so playlists are revalidated.
        'cache-control': extension === 'ts' ? 'private, max-age=3600' : 'private, no-cache',
      },
    };
  }
}
