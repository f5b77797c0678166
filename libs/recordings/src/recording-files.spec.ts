import { describe, expect, it } from 'vitest';
import { extensionFor, locationWritten } from './recording-files.js';

describe(extensionFor.name, () => {
  it('keeps composites in MP4 and a track in its codec’s container', () => {
    expect(extensionFor('room_composite')).toBe('mp4');
    expect(extensionFor('track_composite', 'audio/opus')).toBe('mp4');
    expect(extensionFor('track', 'audio/opus')).toBe('ogg');
    expect(extensionFor('track', 'audio/red')).toBe('ogg');
    expect(extensionFor('track', 'video/VP8')).toBe('webm');
    expect(extensionFor('track', 'video/H264')).toBe('mp4');
  });
});

describe(locationWritten.name, () => {
  it('follows the extension egress really wrote', () => {
    expect(locationWritten('app_a/rec_b.mp4', '/data/.incoming/app_a/rec_b.ogg')).toBe('app_a/rec_b.ogg');
    expect(locationWritten('app_a/rec_b.mp4', 'https://bucket.s3/app_a/rec_b.ogg')).toBe('app_a/rec_b.ogg');
  });

  it('ignores reports about other files or without a name', () => {
    expect(locationWritten('app_a/rec_b.mp4', '/data/other.ogg')).toBe('app_a/rec_b.mp4');
    expect(locationWritten('app_a/rec_b.mp4', undefined)).toBe('app_a/rec_b.mp4');
    expect(locationWritten('app_a/rec_b.mp4', '')).toBe('app_a/rec_b.mp4');
  });
});
