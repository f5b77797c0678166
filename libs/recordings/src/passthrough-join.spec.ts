import { describe, expect, it } from 'vitest';
import { type JoinInput, joinArgs, MAX_FIRST_SAMPLE_S, planJoin } from './passthrough-join.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const video = (patch: Partial<JoinInput> = {}): JoinInput => ({
  track: 'video',
  path: '/in/v.webm',
  zeroAt: at(0),
  startS: 0,
  durationS: 10,
  codec: 'vp8',
  ...patch,
});
const audio = (patch: Partial<JoinInput> = {}): JoinInput => ({
  track: 'audio',
  path: '/in/a.ogg',
  zeroAt: at(0),
  startS: 0,
  durationS: 13.8,
  codec: 'opus',
  ...patch,
});

describe(planJoin.name, () => {
  it('delays the later track by the gap between the instants the two files start from', () => {
    const sut = planJoin([video({ zeroAt: at(0) }), audio({ zeroAt: at(1_234) })], undefined, false);
    expect(sut.offsets).toEqual({ video: 0, audio: 1.234 });
    const earlierAudio = planJoin([video({ zeroAt: at(500) }), audio({ zeroAt: at(0) })], undefined, false);
    expect(earlierAudio.offsets).toEqual({ video: 0.5, audio: 0 });
  });

  it('places a file that starts after its timestamp 0 by its first sample (what egress dropped before recording)', () => {
    // Both egresses read their first packet at the same instant; the video file's first frame is at 2.139 s.
    const sut = planJoin([video({ zeroAt: at(0), startS: 2.139 }), audio({ zeroAt: at(0) })], undefined, false);
    expect(sut.offsets).toEqual({ video: 2.139, audio: 0 });
    const both = planJoin([video({ zeroAt: at(300), startS: 0.5 }), audio({ zeroAt: at(0), startS: 0.2 })], undefined, false);
    expect(both.offsets).toEqual({ video: 0.6, audio: 0 });
  });

  it('places a file whose first timestamp jumped hours (or below 0) at its wall-clock zero, and keeps the recording its length', () => {
    const jumped = planJoin([video({ zeroAt: at(0), startS: 1.5 }), audio({ zeroAt: at(200), startS: 10_800 })], at(10_000), false);
    expect(jumped.offsets).toEqual({ video: 1.3, audio: 0 });
    expect(jumped.durationS).toBeCloseTo(9.8, 3);
    expect(planJoin([video({ startS: -7_200 }), audio({ startS: 0.2 })], undefined, false).offsets).toEqual({ video: 0, audio: 0.2 });
    // Up to the bound, a late first sample is time egress waited (for a keyframe): it is kept.
    expect(planJoin([video({ startS: MAX_FIRST_SAMPLE_S }), audio()], undefined, false).offsets).toEqual({
      video: MAX_FIRST_SAMPLE_S,
      audio: 0,
    });
  });

  it("ends at the recording's end, without the silence egress appends to Opus after the stop", () => {
    const sut = planJoin([video({ durationS: 10 }), audio({ durationS: 13.8 })], at(10_050), false);
    expect(sut.durationS).toBeCloseTo(10.05, 6);
    const audioOutlivesVideo = planJoin([video({ durationS: 4 }), audio({ durationS: 13.8 })], at(10_000), false);
    expect(audioOutlivesVideo.durationS).toBeCloseTo(10, 6);
    const unknownEnd = planJoin([video({ durationS: 10 }), audio({ durationS: 13.8 })], undefined, false);
    expect(unknownEnd.durationS).toBeCloseTo(13.8, 6);
  });

  it('keeps VP8 + Opus as WebM, turns H.264 + Opus into MP4 with AAC unless Opus is kept', () => {
    expect(planJoin([video(), audio()], undefined, false)).toMatchObject({ container: 'webm', audio: 'copy' });
    expect(planJoin([video({ codec: 'h264' }), audio()], undefined, false)).toMatchObject({ container: 'mp4', audio: 'aac' });
    expect(planJoin([video({ codec: 'h264' }), audio()], undefined, true)).toMatchObject({ container: 'mp4', audio: 'copy' });
    expect(planJoin([audio()], undefined, false)).toMatchObject({ container: 'ogg', audio: 'copy' });
  });
});

describe(joinArgs.name, () => {
  it('copies the video, shifts each input by its offset and ends at the planned length', () => {
    const inputs = [audio({ zeroAt: at(40) }), video({ codec: 'h264', path: '/in/v.mp4' })];
    const sut = joinArgs(inputs, planJoin(inputs, at(10_000), false), '/out/r.mp4.partial');
    expect(sut.join(' ')).toBe(
      '-hide_banner -loglevel error -y -itsoffset 0.000 -i /in/v.mp4 -itsoffset 0.040 -i /in/a.ogg -map 0:v:0 -map 1:a:0 ' +
        '-c:v copy -c:a aac -b:a 128k -t 10.000 -movflags +faststart -f mp4 /out/r.mp4.partial',
    );
  });
});
