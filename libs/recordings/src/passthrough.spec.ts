import { describe, expect, it } from 'vitest';
import { judgeParts, type PartState, partInPath, partLocation, passthroughExtension } from './passthrough.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const part = (patch: Partial<PartState> & Pick<PartState, 'track' | 'state'>): PartState => ({
  startedAt: null,
  mediaStartedAt: null,
  endedAt: null,
  error: null,
  ...patch,
});

describe(judgeParts.name, () => {
  const now = at(100);

  it('starts the recording only once both egresses run, from the earlier start', () => {
    expect(
      judgeParts([part({ track: 'video', state: 'starting' }), part({ track: 'audio', state: 'active', startedAt: at(1) })], now),
    ).toEqual({
      kind: 'starting',
    });
    expect(
      judgeParts(
        [part({ track: 'video', state: 'active', startedAt: at(2) }), part({ track: 'audio', state: 'active', startedAt: at(1) })],
        now,
      ),
    ).toEqual({ kind: 'active', startedAt: at(1) });
  });

  it('starts the recording where its file begins: the first packet an egress read, seconds before it reported its start on a busy host', () => {
    // Egress reads packets while it builds its pipeline; its file's timestamp 0 is the first of them.
    const video = part({ track: 'video', state: 'active', startedAt: at(5), mediaStartedAt: at(2) });
    const audio = part({ track: 'audio', state: 'active', startedAt: at(5), mediaStartedAt: at(3) });
    expect(judgeParts([video, audio], now)).toEqual({ kind: 'active', startedAt: at(2) });
    // An egress that never said when its file began counts from its start.
    expect(judgeParts([video, { ...audio, startedAt: at(1), mediaStartedAt: null }], now)).toEqual({ kind: 'active', startedAt: at(1) });
    expect(
      judgeParts(
        [
          { ...video, state: 'complete', endedAt: at(20) },
          { ...audio, state: 'complete', endedAt: at(21) },
        ],
        now,
      ),
    ).toEqual({ kind: 'finished', startedAt: at(2), endedAt: at(20) });
  });

  it('fails the recording when either egress fails, naming which and why', () => {
    const sut = judgeParts(
      [
        part({ track: 'video', state: 'aborted', error: 'Stop called before pipeline could start' }),
        part({ track: 'audio', state: 'active', startedAt: at(1) }),
      ],
      now,
    );
    expect(sut).toEqual({ kind: 'failed', reason: 'video egress aborted: Stop called before pipeline could start' });
  });

  it('cuts the recording where an egress died while recording, once the other has closed its file', () => {
    const killed = part({ track: 'video', state: 'failed', error: 'internal error', startedAt: at(1), endedAt: at(9) });
    expect(judgeParts([killed, part({ track: 'audio', state: 'active', startedAt: at(1) })], now)).toEqual({
      kind: 'cut',
      reason: 'video egress failed: internal error; the file keeps what was recorded until then',
      startedAt: at(1),
      endedAt: at(9),
      othersDone: false,
    });
    expect(judgeParts([killed, part({ track: 'audio', state: 'complete', startedAt: at(1), endedAt: at(10) })], now)).toMatchObject({
      kind: 'cut',
      othersDone: true,
    });
  });

  it('keeps recording the other track when one ends early, and finishes when both have', () => {
    const videoDone = part({ track: 'video', state: 'complete', startedAt: at(1), endedAt: at(10) });
    expect(judgeParts([videoDone, part({ track: 'audio', state: 'active', startedAt: at(1) })], now)).toEqual({
      kind: 'active',
      startedAt: at(1),
    });
    expect(judgeParts([videoDone, part({ track: 'audio', state: 'complete', startedAt: at(1), endedAt: at(30) })], now)).toEqual({
      kind: 'finished',
      startedAt: at(1),
      endedAt: at(30),
    });
  });

  it('ends tracks that ended together (the publisher left) at the first end, before the silence egress appends to Opus', () => {
    expect(
      judgeParts(
        [
          part({ track: 'video', state: 'complete', startedAt: at(1), endedAt: at(20) }),
          part({ track: 'audio', state: 'complete', startedAt: at(1), endedAt: at(24) }),
        ],
        now,
      ),
    ).toEqual({ kind: 'finished', startedAt: at(1), endedAt: at(20) });
  });

  it('is ending while the last egress closes its file', () => {
    expect(
      judgeParts(
        [
          part({ track: 'video', state: 'complete', startedAt: at(1), endedAt: at(10) }),
          part({ track: 'audio', state: 'ending', startedAt: at(1) }),
        ],
        now,
      ),
    ).toEqual({ kind: 'ending', startedAt: at(1) });
  });
});

describe('passthrough file names', () => {
  it('names each track file after the recording, and a replacement attempt apart', () => {
    expect(partLocation('app_1/rec_0123456789abcdef.webm', 'video', 'webm')).toBe('app_1/rec_0123456789abcdef.video.webm');
    expect(partLocation('app_1/rec_0123456789abcdef.webm', 'audio', 'ogg', 2)).toBe('app_1/rec_0123456789abcdef.audio-2.ogg');
    expect(partInPath('/x/.incoming/app_1/rec_0123456789abcdef.audio-2.ogg')).toEqual({
      recordingId: 'rec_0123456789abcdef',
      track: 'audio',
      attempt: 2,
    });
    expect(partInPath('/x/app_1/rec_0123456789abcdef.mp4')).toBeUndefined();
  });

  it('joins VP8/VP9 into WebM, H.264 into MP4, and Opus alone into OGG', () => {
    expect(passthroughExtension('video/VP8')).toBe('webm');
    expect(passthroughExtension('video/vp9')).toBe('webm');
    expect(passthroughExtension('video/H264')).toBe('mp4');
    expect(passthroughExtension(undefined)).toBe('ogg');
  });
});
