import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { RecordingEgress } from '@tally/db';
import { RecordingFiles } from '@tally/recordings';
import { describe, expect, it } from 'vitest';
import { ffprobe } from './ffprobe.js';
import { PassthroughJoiner } from './passthrough-joiner.js';

const run = promisify(execFile);
const ffmpeg = (...args: string[]) => run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

/** A passthrough recording's two track files as egress writes them: fragmented H.264 MP4 and Opus in OGG. */
async function recordingWithParts(
  video: Readonly<{ codec: 'h264' | 'vp8'; timestampsFromS: number }> = { codec: 'h264', timestampsFromS: 0 },
): Promise<{ files: RecordingFiles; parts: RecordingEgress[]; videoPath: string }> {
  const files = new RecordingFiles(mkdtempSync(join(tmpdir(), 'tally-join-')));
  const now = new Date();
  const part = (track: 'video' | 'audio', location: string): RecordingEgress => ({
    recordingId: 'rec_joinjoinjoinjoin',
    track,
    trackSid: `TR_${track}`,
    egressId: `EG_${track}`,
    state: 'complete',
    startedAt: now,
    mediaStartedAt: now,
    endedAt: now,
    location,
    error: null,
    attempt: 0,
    requestedAt: now,
    createdAt: now,
    updatedAt: now,
  });
  const videoFile = `app_a/rec_joinjoinjoinjoin.video.${video.codec === 'h264' ? 'mp4' : 'webm'}`;
  const parts = [part('video', videoFile), part('audio', 'app_a/rec_joinjoinjoinjoin.audio.ogg')];
  const videoPath = files.incomingPath(parts[0]!.location);
  mkdirSync(dirname(videoPath), { recursive: true });
  const source = ['-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=30:duration=4'];
  if (video.codec === 'h264') {
    await ffmpeg(
      ...[...source, '-c:v', 'libx264', '-g', '30', '-pix_fmt', 'yuv420p'],
      ...['-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-frag_duration', '1000000', videoPath],
    );
  } else {
    await ffmpeg(
      ...[...source, '-c:v', 'libvpx', '-b:v', '300k', '-deadline', 'realtime', '-cpu-used', '8'],
      ...['-output_ts_offset', String(video.timestampsFromS), videoPath],
    );
  }
  await ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=440:duration=4', '-c:a', 'libopus', files.incomingPath(parts[1]!.location));
  return { files, parts, videoPath };
}

describe(PassthroughJoiner.name, () => {
  it('joins an H.264 MP4 and an Opus OGG into one MP4 with both tracks', async () => {
    const { files, parts } = await recordingWithParts();
    const joined = await new PassthroughJoiner(files).join(
      { id: 'rec_joinjoinjoinjoin', location: 'app_a/rec_joinjoinjoinjoin.mp4', endedAt: null },
      parts,
      false,
    );
    expect(joined.ok).toBe(true);
    const probe = await ffprobe(files.incomingPath('app_a/rec_joinjoinjoinjoin.mp4'));
    expect(probe.codecs).toEqual([
      { type: 'video', codec: 'h264' },
      { type: 'audio', codec: 'aac' },
    ]);
  });

  it('keeps a VP8 file whose timestamps start hours in (a publisher whose RTP timestamps jumped) with its audio, and the WebM its length', async () => {
    const { files, parts, videoPath } = await recordingWithParts({ codec: 'vp8', timestampsFromS: 3 * 3600 });
    expect((await ffprobe(videoPath)).startS).toBe(10_800);
    const joined = await new PassthroughJoiner(files).join(
      { id: 'rec_joinjoinjoinjoin', location: 'app_a/rec_joinjoinjoinjoin.webm', endedAt: null },
      parts,
      false,
    );
    expect(joined.ok).toBe(true);
    const { stdout } = await run('ffprobe', [
      ...['-v', 'error', '-show_entries', 'format=duration:stream=codec_type,start_time', '-of', 'json'],
      files.incomingPath('app_a/rec_joinjoinjoinjoin.webm'),
    ]);
    const probe = JSON.parse(stdout) as { format: { duration: string }; streams: { codec_type: string; start_time: string }[] };
    // Four seconds of picture and sound from the start, not a file three hours long whose picture comes at its end.
    expect(Number(probe.format.duration)).toBeLessThan(5);
    expect(probe.streams.map((st) => [st.codec_type, Number(st.start_time) < 1])).toEqual([
      ['video', true],
      ['audio', true],
    ]);
  });

  it('names the video track unreadable when the bytes after its moov are overwritten, instead of completing with audio alone', async () => {
    const { files, parts, videoPath } = await recordingWithParts();
    // What mp4mux did when it rewrote a longer moov in place: the first fragment's header is gone.
    const bytes = readFileSync(videoPath);
    const moovStart = bytes.readUInt32BE(0); // right after the ftyp
    const moovEnd = moovStart + bytes.readUInt32BE(moovStart);
    const fd = openSync(videoPath, 'r+');
    writeSync(fd, Buffer.alloc(64, 0x5a), 0, 64, moovEnd);
    closeSync(fd);
    expect((await ffprobe(videoPath)).codecs).toEqual([{ type: 'video', codec: 'h264' }]);

    const joined = await new PassthroughJoiner(files).join(
      { id: 'rec_joinjoinjoinjoin', location: 'app_a/rec_joinjoinjoinjoin.mp4', endedAt: null },
      parts,
      false,
    );
    expect(joined).toEqual({ ok: false, reason: 'the video file is empty or unreadable (cut short?)' });
  });
});
