import type { AppLimits } from './app-limits.js';
import { fits, type Placement, type PoolState, type Refusal } from './admission.js';
import type { WorkloadKind } from './costs.js';
import type { CapacityModel } from './model.js';

export const EGRESS_MODES = ['room_composite', 'track_composite', 'track', 'passthrough'] as const;
export type EgressMode = (typeof EGRESS_MODES)[number];
/** An app's setting: `auto` picks per recording (architecture rule 5); a mode forces it. */
export type EgressModeSetting = 'auto' | EgressMode;

/**
 * What file an app wants from one publisher (docs/recordings.md). `source` keeps the publisher's
 * video codec (VP8/VP9 → WebM with Opus, H.264 → MP4 with AAC); `source_opus` keeps Opus in the
 * H.264 MP4 too; `mp4` demands H.264 + AAC in MP4, which a VP8/VP9 publisher only gets transcoded.
 */
export const RECORDING_FORMATS = ['source', 'source_opus', 'mp4'] as const;
export type RecordingFormat = (typeof RECORDING_FORMATS)[number];

/** Whether a publisher's video MIME type (`video/H264`, `video/VP8`, ...) is H.264. */
export function isH264(mimeType: string | undefined): boolean {
  return (mimeType ?? '').toLowerCase().includes('h264');
}

export function egressKindOf(mode: EgressMode): WorkloadKind {
  return `egress.${mode}`;
}

/** What is in the room when the recording starts. Track counts are totals over all publishers. */
export type RecordingShape = Readonly<{
  publishers: number;
  videoTracks: number;
  audioTracks: number;
  /** A composition layout the app asked for ("grid", "speaker", ...). */
  layout?: string;
  /** The single publisher's video MIME type, when there is one (`video/VP8`, `video/H264`). */
  videoMimeType?: string;
}>;

/** Whether a mode can produce the whole recording (a layout aside, which only room-composite draws). */
export function canRecord(mode: EgressMode, shape: RecordingShape): boolean {
  const tracks = shape.videoTracks + shape.audioTracks;
  switch (mode) {
    case 'room_composite':
      return true;
    case 'track_composite':
      return shape.publishers === 1 && shape.videoTracks <= 1 && shape.audioTracks <= 1 && tracks >= 1;
    case 'track':
      return shape.publishers === 1 && tracks === 1;
    case 'passthrough':
      return shape.publishers === 1 && shape.videoTracks <= 1 && shape.audioTracks <= 1 && tracks >= 1;
  }
}

export type ModeChoice = Readonly<{ ok: true; mode: EgressMode; reason: string }> | Readonly<{ ok: false; reason: string }>;

/** Who forced a mode, for the reason text: the app's setting unless said otherwise. */
export type ModeSource = 'the request' | "the app's setting";

export function chooseEgressMode(
  shape: RecordingShape,
  setting: EgressModeSetting = 'auto',
  forcedBy: ModeSource = "the app's setting",
  format: RecordingFormat = 'source',
): ModeChoice {
  const counts = { publishers: shape.publishers, videoTracks: shape.videoTracks, audioTracks: shape.audioTracks };
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
  if (setting !== 'auto') {
    return canRecord(setting, shape)
      ? { ok: true, mode: setting, reason: `${setting} forced by ${forcedBy}` }
      : { ok: false, reason: `${setting} (forced by ${forcedBy}) cannot record ${describe(shape)}` };
  }
  if (shape.layout !== undefined) {
    return { ok: true, mode: 'room_composite', reason: `auto: the layout "${shape.layout}" needs composing` };
  }
  if (shape.publishers === 0) {
    return { ok: true, mode: 'room_composite', reason: 'auto: no publisher yet, only room-composite records those who join later' };
  }
  if (canRecord('track', shape) && shape.videoTracks === 0) {
    return { ok: true, mode: 'track', reason: 'auto: a single audio track is recorded as is, without transcoding' };
  }
  if (canRecord('passthrough', shape)) {
    if (format === 'mp4' && shape.videoTracks === 1 && !isH264(shape.videoMimeType)) {
      return {
        ok: true,
        mode: 'track_composite',
        reason: `auto: the app's recordingFormat mp4 needs H.264 + AAC and the publisher sends ${codecName(shape.videoMimeType)}, so the video is transcoded`,
      };
    }
    return { ok: true, mode: 'passthrough', reason: `auto: ${describe(shape)} is recorded as sent, without transcoding` };
  }
  if (canRecord('track_composite', shape)) {
    return { ok: true, mode: 'track_composite', reason: `auto: ${describe(shape)} needs no composing; passthrough needs local storage` };
  }
  return { ok: true, mode: 'room_composite', reason: `auto: ${describe(shape)} needs composing` };
}

export type RecordingPolicy = Readonly<{
  mode: EgressModeSetting;
  allowFallback: boolean;
  forcedBy?: ModeSource;
  format?: RecordingFormat;
}>;

export type RecordingRequest = Readonly<{
  appId: string;
  limits: AppLimits;
  shape: RecordingShape;
  policy: RecordingPolicy;
  nodeId?: string;
}>;

export type RecordingPlan =
  | Readonly<{ ok: true; mode: EgressMode; placement: Placement; reason: string; fellBackFrom?: EgressMode }>
  | Readonly<{ ok: false; code: 'egress_mode_unsupported'; reason: string }>
  | Readonly<{ ok: false; code: 'refused'; refusal: Refusal; reason: string }>;

export type ModeCandidate = Readonly<{ mode: EgressMode; reason: string; fellBackFrom?: EgressMode }>;

/**
 * The modes to try, in order: the chosen one, then (when the app allows falling back) each cheaper
 * mode that can still record the room, dearest first. Each says why it would be used.
 */
export function recordingCandidates(
  model: CapacityModel,
  shape: RecordingShape,
  policy: RecordingPolicy,
): Readonly<{ ok: true; candidates: readonly ModeCandidate[] }> | Readonly<{ ok: false; reason: string }> {
  const choice = chooseEgressMode(shape, policy.mode, policy.forcedBy, policy.format);
  if (!choice.ok) return { ok: false, reason: choice.reason };
  const first: ModeCandidate = { mode: choice.mode, reason: choice.reason };
  if (!policy.allowFallback) return { ok: true, candidates: [first] };
  const cheaper = EGRESS_MODES.filter((m) => canRecord(m, shape) && isCheaper(model, m, choice.mode)).sort(
    (a, b) => Number(isCheaper(model, a, b)) - Number(isCheaper(model, b, a)),
  );
  const lost = (mode: EgressMode): string => {
    if (shape.layout !== undefined && choice.mode === 'room_composite') return ' without the layout';
    if (mode === 'passthrough' && policy.format === 'mp4' && !isH264(shape.videoMimeType))
      return ` (the file keeps ${codecName(shape.videoMimeType)})`;
    return '';
  };
  return {
    ok: true,
    candidates: [
      first,
      ...cheaper.map((mode) => ({ mode, fellBackFrom: choice.mode, reason: `${choice.mode} refused; fell back to ${mode}${lost(mode)}` })),
    ],
  };
}

/**
 * Picks the recording's mode and admits it. When the mode is refused and the app allows it, the
 * dearest cheaper mode that can still record the room is tried, and the reason says what was lost.
 */
export function planRecording(pool: PoolState, request: RecordingRequest): RecordingPlan {
  const options = recordingCandidates(pool.model, request.shape, request.policy);
  if (!options.ok) return { ok: false, code: 'egress_mode_unsupported', reason: options.reason };

  const attempt = (mode: EgressMode) =>
    fits(pool, {
      appId: request.appId,
      limits: request.limits,
      kind: egressKindOf(mode),
      ...(request.nodeId === undefined ? {} : { nodeId: request.nodeId }),
    });

  const [chosen, ...fallbacks] = options.candidates;
  if (!chosen) throw new Error('no candidate mode');
  const first = attempt(chosen.mode);
  if (first.ok) return { ok: true, mode: chosen.mode, placement: first.placement, reason: chosen.reason };
  const refused = `${chosen.mode} refused: ${explainRefusal(first.refusal)}`;
  for (const candidate of fallbacks) {
    const next = attempt(candidate.mode);
    if (!next.ok) continue;
    return {
      ok: true,
      mode: candidate.mode,
      placement: next.placement,
      fellBackFrom: chosen.mode,
      reason: candidate.reason.replace(`${chosen.mode} refused`, refused),
    };
  }
  return { ok: false, code: 'refused', refusal: first.refusal, reason: refused };
}

/** Cheaper in RAM, the resource that runs out first on the nodes Tally targets, then in CPU. */
function isCheaper(model: CapacityModel, a: EgressMode, b: EgressMode): boolean {
  const ca = model.costs[egressKindOf(a)];
  const cb = model.costs[egressKindOf(b)];
  return ca.ramMb !== cb.ramMb ? ca.ramMb < cb.ramMb : ca.cpuMillicores < cb.cpuMillicores;
}

/** One line naming the limit and the figures, for reasons and logs. */
export function explainRefusal(r: Refusal): string {
  return `${r.resource} (used ${r.used} + requested ${r.requested} > limit ${r.limit})`;
}

function codecName(mimeType: string | undefined): string {
  return mimeType?.split('/')[1]?.toUpperCase() || 'a non-H.264 codec';
}

function describe(shape: RecordingShape): string {
  const p = shape.publishers === 1 ? 'one publisher' : `${shape.publishers} publishers`;
  return `${p} with ${shape.videoTracks} video and ${shape.audioTracks} audio track(s)`;
}
