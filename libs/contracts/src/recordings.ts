import { EGRESS_MODES, RECORDING_FORMATS } from '@tally/capacity';
import { z } from 'zod';
import { AppId, RecordingId, StreamId } from './ids.js';

export const RecordingMode = z.enum(EGRESS_MODES);
export type RecordingMode = z.infer<typeof RecordingMode>;

/** An app's recording setting: `auto` picks a mode per recording, a mode forces it. */
export const RecordingModeSetting = z.enum(['auto', ...EGRESS_MODES]);
export type RecordingModeSetting = z.infer<typeof RecordingModeSetting>;

/**
 * The file an app wants from a single publisher: `source` keeps the publisher's video codec (VP8/VP9
 * → WebM with Opus, H.264 → MP4 with AAC), `source_opus` keeps Opus in the H.264 MP4 as well, `mp4`
 * demands H.264 + AAC in MP4 (a VP8/VP9 publisher is then transcoded by track-composite).
 */
export const RecordingFormat = z.enum(RECORDING_FORMATS);
export type RecordingFormat = z.infer<typeof RecordingFormat>;

export const RecordingStatus = z.enum(['starting', 'active', 'ending', 'complete', 'failed']);
export type RecordingStatus = z.infer<typeof RecordingStatus>;

export const StartRecordingBody = z
  .strictObject({
    mode: RecordingModeSetting.default('auto'),
    /** A composition layout (room-composite only): grid, speaker, single-speaker, or a custom template's name. */
    layout: z
      .string()
      .regex(/^[a-z0-9-]{1,40}$/, 'lowercase letters, digits and - only')
      .optional(),
  })
  .meta({ id: 'StartRecordingBody' });
export type StartRecordingBody = z.infer<typeof StartRecordingBody>;

export const RecordingCodec = z.object({ type: z.enum(['video', 'audio']), codec: z.string() });

export const LadderStatus = z.enum(['queued', 'running', 'ready', 'failed']);
export type LadderStatus = z.infer<typeof LadderStatus>;

/** `nvenc`: h264_nvenc on an NVIDIA GPU; `x264`: libx264 on the CPU. */
export const LadderEncoder = z.enum(['nvenc', 'x264']);
export type LadderEncoder = z.infer<typeof LadderEncoder>;

export const LadderRendition = z
  .object({
    name: z.string(),
    width: z.number().int(),
    height: z.number().int(),
    bitrateKbps: z.number().int(),
    /** The rendition's HLS playlist, relative to the ladder's master playlist. */
    playlist: z.string(),
  })
  .meta({ id: 'LadderRendition' });
export type LadderRendition = z.infer<typeof LadderRendition>;

/** A recording's VOD ladder: HLS renditions under `…/recordings/{id}/ladder/`, `master.m3u8` first. */
export const LadderView = z
  .object({
    status: LadderStatus,
    /** The encoder of the current (or last) attempt; a failed GPU attempt is retried on the CPU. Null when no node would take it. */
    encoder: LadderEncoder.nullable(),
    nodeId: z.string().nullable(),
    /** Highest first; empty until the ladder is ready. */
    renditions: z.array(LadderRendition),
    /** The master playlist's path under the API, once ready. */
    master: z.string().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'Ladder' });
export type LadderView = z.infer<typeof LadderView>;

/**
 * Why a recording ended: `stopped` (a stop through the API, or the stream or egress ending on its own),
 * `max_duration` (the app's maxRecordingDurationS), `disk_full` (the filesystem it was written to
 * reached its stop watermark, so Tally stopped it and kept what was recorded).
 */
export const RECORDING_END_REASONS = ['stopped', 'max_duration', 'disk_full'] as const;
export const RecordingEndReason = z.enum(RECORDING_END_REASONS).meta({ id: 'RecordingEndReason' });
export type RecordingEndReason = z.infer<typeof RecordingEndReason>;

export const RecordingView = z
  .object({
    id: RecordingId,
    appId: AppId,
    streamId: StreamId,
    mode: RecordingMode,
    status: RecordingStatus,
    /** Why this mode was chosen, and what a fallback gave up. */
    reason: z.string(),
    layout: z.string().nullable(),
    /**
     * `local`: a file under the app's recordings directory; `s3`: an object key in the configured
     * bucket. With object storage on, a complete recording is `local` until its upload is verified.
     */
    storage: z.enum(['local', 's3']),
    location: z.string(),
    createdAt: z.iso.datetime(),
    /** When egress received the recording's first media (docs/recordings.md); null until the recording runs. */
    startedAt: z.iso.datetime().nullable(),
    endedAt: z.iso.datetime().nullable(),
    durationS: z.number().nullable(),
    sizeBytes: z.number().int().nullable(),
    sha256: z.string().nullable(),
    codecs: z.array(RecordingCodec).nullable(),
    error: z.string().nullable(),
    /** Why the last upload to object storage failed: the recording stays complete on local storage and is uploaded again later. */
    uploadError: z.string().nullable(),
    /** Why the recording ended (see RecordingEndReason); null while it runs and when it failed. */
    endReason: RecordingEndReason.nullable(),
    /** The VOD ladder made from the complete recording, null until one is requested. */
    ladder: LadderView.nullable(),
  })
  .meta({ id: 'Recording' });
export type RecordingView = z.infer<typeof RecordingView>;

export const RecordingList = z.object({ items: z.array(RecordingView) }).meta({ id: 'RecordingList' });
export type RecordingList = z.infer<typeof RecordingList>;

export const RecordingListQuery = z.strictObject({ status: RecordingStatus.optional(), streamId: StreamId.optional() });
export type RecordingListQuery = z.infer<typeof RecordingListQuery>;

export const RecordingParams = z.object({ appId: AppId, recordingId: RecordingId });

/** A file of a recording's ladder: `master.m3u8`, a rendition's playlist or one of its segments. */
export const LadderFileParams = RecordingParams.extend({
  file: z.string().regex(/^[a-z0-9_]{1,40}\.(m3u8|ts)$/, 'a playlist (.m3u8) or segment (.ts) name of the ladder'),
});
