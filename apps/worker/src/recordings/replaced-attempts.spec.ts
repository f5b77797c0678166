import { describe, expect, it } from 'vitest';
import { replacedAttempts } from './passthrough-joiner.js';

describe('replacedAttempts', () => {
  it("names the files of the attempts each track's current one replaced", () => {
    expect(
      replacedAttempts([
        { location: 'app_a/rec_1.video-2.webm', attempt: 2 },
        { location: 'app_a/rec_1.audio.ogg', attempt: 0 },
      ]),
    ).toEqual(['app_a/rec_1.video.webm', 'app_a/rec_1.video-1.webm']);
    expect(replacedAttempts([{ location: 'app_a/rec_1.video-1.mp4', attempt: 1 }])).toEqual(['app_a/rec_1.video.mp4']);
  });
});
