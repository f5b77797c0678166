import { RecordingCodec, type RecordingView } from '@tally/contracts';
import type { Recording } from '@tally/db';
import { z } from 'zod';

const Codecs = z.array(RecordingCodec);

export function toRecordingView(recording: Recording): RecordingView {
  const codecs = Codecs.safeParse(recording.codecs);
  return {
    id: recording.id,
    appId: recording.appId,
    streamId: recording.streamId,
    mode: recording.mode,
    status: recording.status,
    reason: recording.reason,
    layout: recording.layout,
    storage: recording.storage === 's3' ? 's3' : 'local',
    location: recording.location,
    createdAt: recording.createdAt.toISOString(),
    startedAt: recording.startedAt?.toISOString() ?? null,
    endedAt: recording.endedAt?.toISOString() ?? null,
    durationS: recording.durationS,
    sizeBytes: recording.sizeBytes === null ? null : Number(recording.sizeBytes),
    sha256: recording.sha256,
    codecs: codecs.success ? codecs.data : null,
    error: recording.error,
  };
}
