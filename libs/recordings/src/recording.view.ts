import { RecordingCodec, RecordingEndReason, type LadderView, type RecordingView } from '@tally/contracts';
import type { Recording } from '@tally/db';
import { MASTER_PLAYLIST, playlistName } from '@tally/transcode';
import { z } from 'zod';

const Codecs = z.array(RecordingCodec);
const Renditions = z.array(z.object({ name: z.string(), width: z.number(), height: z.number(), bitrateKbps: z.number() }));

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
    uploadError: recording.uploadError,
    endReason: RecordingEndReason.safeParse(recording.endReason).data ?? null,
    ladder: toLadderView(recording),
  };
}

function toLadderView(recording: Recording): LadderView | null {
  if (recording.ladderStatus === null) return null;
  const ready = recording.ladderStatus === 'ready';
  const renditions = ready ? (Renditions.safeParse(recording.ladderRenditions).data ?? []) : [];
  return {
    status: recording.ladderStatus,
    encoder: recording.ladderEncoder,
    nodeId: recording.ladderNodeId,
    renditions: renditions.map((r) => ({ ...r, playlist: playlistName(r) })),
    master: ready ? `/v1/apps/${recording.appId}/recordings/${recording.id}/ladder/${MASTER_PLAYLIST}` : null,
    error: recording.ladderError,
  };
}
