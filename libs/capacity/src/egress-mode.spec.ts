import { describe, expect, it } from 'vitest';
import { admit, type PoolState } from './admission.js';
import type { AppLimits } from './app-limits.js';
import { DEFAULT_NODE_BUDGET, type NodeBudget } from './budget.js';
import { chooseEgressMode, planRecording, recordingCandidates, type RecordingRequest, type RecordingShape } from './egress-mode.js';
import { DEFAULT_MODEL } from './model.js';
import { baseLoadOf } from './pool.js';
import { EMPTY_USAGE } from './usage.js';

const solo: RecordingShape = { publishers: 1, videoTracks: 1, audioTracks: 1 };
const limits: AppLimits = {
  streams: 10,
  viewers: 100,
  recordings: 10,
  room_composites: 3,
  ingresses: 2,
  transcodes: 2,
  cameras: 2,
  camera_viewers: 2,
};
const poolOf = (nodes: NodeBudget[]): PoolState => ({ nodes, model: DEFAULT_MODEL, usage: EMPTY_USAGE });
/** A node with room for a track-composite but not for Chrome (with the egress runtime it starts). */
const cramped = (): NodeBudget => ({ ...DEFAULT_NODE_BUDGET, ramMb: baseLoadOf(DEFAULT_NODE_BUDGET).ramMb + 1_500 });
const record = (patch: Partial<RecordingRequest>): RecordingRequest => ({
  appId: 'app',
  limits,
  shape: solo,
  policy: { mode: 'auto', allowFallback: true },
  ...patch,
});

describe(chooseEgressMode.name, () => {
  it.each([
    [{ publishers: 1, videoTracks: 1, audioTracks: 1 }, 'passthrough'],
    [{ publishers: 1, videoTracks: 1, audioTracks: 0 }, 'passthrough'],
    [{ publishers: 1, videoTracks: 0, audioTracks: 1 }, 'track'],
    [{ publishers: 2, videoTracks: 2, audioTracks: 2 }, 'room_composite'],
    [{ publishers: 1, videoTracks: 2, audioTracks: 1 }, 'room_composite'],
    [{ publishers: 1, videoTracks: 1, audioTracks: 1, layout: 'speaker' }, 'room_composite'],
    [{ publishers: 0, videoTracks: 0, audioTracks: 0 }, 'room_composite'],
  ] as const)('auto records %o with %s', (shape, mode) => {
    expect(chooseEgressMode(shape)).toMatchObject({ ok: true, mode });
  });

  it('transcodes with track-composite only when the app demands H.264/AAC MP4 and the publisher sends something else', () => {
    const vp8 = { ...solo, videoMimeType: 'video/VP8' };
    const h264 = { ...solo, videoMimeType: 'video/H264' };
    expect(chooseEgressMode(vp8, 'auto', "the app's setting", 'mp4')).toMatchObject({
      ok: true,
      mode: 'track_composite',
      reason: expect.stringContaining('sends VP8') as unknown,
    });
    expect(chooseEgressMode(h264, 'auto', "the app's setting", 'mp4')).toMatchObject({ ok: true, mode: 'passthrough' });
    expect(chooseEgressMode(vp8, 'auto', "the app's setting", 'source')).toMatchObject({ ok: true, mode: 'passthrough' });
  });

  it('honours a mode the app forces', () => {
    expect(chooseEgressMode(solo, 'room_composite')).toMatchObject({ ok: true, mode: 'room_composite' });
  });

  it('refuses a forced mode that cannot record the room, and says why', () => {
    const sut = chooseEgressMode({ publishers: 3, videoTracks: 3, audioTracks: 3 }, 'track_composite');
    expect(sut.ok).toBe(false);
    expect(sut.reason).toContain('3 publishers');
  });

  it('rejects negative or fractional counts', () => {
    expect(() => chooseEgressMode({ publishers: -1, videoTracks: 0, audioTracks: 0 })).toThrow(RangeError);
  });
});

describe(planRecording.name, () => {
  it('admits the mode auto picks and explains the choice', () => {
    const sut = planRecording(poolOf([DEFAULT_NODE_BUDGET]), record({}));
    expect(sut).toMatchObject({ ok: true, mode: 'passthrough' });
    expect(sut.ok && sut.reason).toContain('without transcoding');
  });

  it('falls back from Chrome to track-composite when Chrome does not fit, and says the layout is lost', () => {
    const sut = planRecording(poolOf([cramped()]), record({ shape: { ...solo, layout: 'grid' } }));
    expect(sut).toMatchObject({ ok: true, mode: 'track_composite', fellBackFrom: 'room_composite' });
    expect(sut.ok && sut.reason).toMatch(/room_composite refused: node\.ram.*fell back to track_composite without the layout/);
  });

  it('falls back when the app’s Chrome quota is used up', () => {
    let pool = poolOf([DEFAULT_NODE_BUDGET]);
    const one = { ...limits, room_composites: 1 };
    const first = admit(pool, { appId: 'app', limits: one, kind: 'egress.room_composite' });
    if (!first.ok) throw new Error('refused');
    pool = { ...pool, usage: first.usage };
    const sut = planRecording(pool, record({ limits: one, policy: { mode: 'room_composite', allowFallback: true } }));
    expect(sut).toMatchObject({ ok: true, mode: 'track_composite', fellBackFrom: 'room_composite' });
  });

  it('does not fall back when the app does not allow it', () => {
    const sut = planRecording(
      poolOf([cramped()]),
      record({ shape: { ...solo, layout: 'grid' }, policy: { mode: 'auto', allowFallback: false } }),
    );
    expect(sut).toMatchObject({ ok: false, code: 'refused', refusal: { resource: 'node.ram' } });
  });

  it('does not fall back to a mode that would drop publishers', () => {
    const sut = planRecording(poolOf([cramped()]), record({ shape: { publishers: 2, videoTracks: 2, audioTracks: 2 } }));
    expect(sut).toMatchObject({ ok: false, code: 'refused', refusal: { resource: 'node.ram' } });
  });

  it('reports a forced mode that cannot record the room as unsupported, not as a refusal', () => {
    const sut = planRecording(
      poolOf([DEFAULT_NODE_BUDGET]),
      record({ shape: { publishers: 2, videoTracks: 2, audioTracks: 2 }, policy: { mode: 'track', allowFallback: true } }),
    );
    expect(sut).toMatchObject({ ok: false, code: 'egress_mode_unsupported' });
  });
});

describe(recordingCandidates.name, () => {
  it('offers only the chosen mode when the app does not allow falling back', () => {
    expect(recordingCandidates(DEFAULT_MODEL, { ...solo, layout: 'grid' }, { mode: 'auto', allowFallback: false })).toEqual({
      ok: true,
      candidates: [{ mode: 'room_composite', reason: 'auto: the layout "grid" needs composing' }],
    });
  });

  it('falls back from Chrome to track-composite for one publisher, saying the layout is lost', () => {
    const result = recordingCandidates(DEFAULT_MODEL, { ...solo, layout: 'grid' }, { mode: 'auto', allowFallback: true });
    expect(result.ok && result.candidates.map((c) => [c.mode, c.fellBackFrom])).toEqual([
      ['room_composite', undefined],
      ['track_composite', 'room_composite'],
      ['passthrough', 'room_composite'],
    ]);
    expect(result.ok && result.candidates[1]?.reason).toBe('room_composite refused; fell back to track_composite without the layout');
  });

  it('has nothing cheaper to offer two publishers than room-composite', () => {
    const result = recordingCandidates(
      DEFAULT_MODEL,
      { publishers: 2, videoTracks: 2, audioTracks: 2 },
      { mode: 'auto', allowFallback: true },
    );
    expect(result.ok && result.candidates.map((c) => c.mode)).toEqual(['room_composite']);
  });

  it('refuses a forced mode that cannot record the room, with the reason', () => {
    expect(recordingCandidates(DEFAULT_MODEL, solo, { mode: 'track', allowFallback: true })).toEqual({
      ok: false,
      reason: "track (forced by the app's setting) cannot record one publisher with 1 video and 1 audio track(s)",
    });
  });
});
