import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { z } from 'zod';

const run = promisify(execFile);

export type SourceInfo = Readonly<{ width: number; height: number; hasAudio: boolean }>;

export type EncoderSupport = Readonly<{ nvenc: boolean; scaleCuda: boolean }>;

/** What the ladder runner needs from ffmpeg; the real one runs the binaries, a unit test may fake it. */
export type Ffmpeg = Readonly<{
  probe(path: string): Promise<SourceInfo>;
  run(args: readonly string[]): Promise<void>;
  support(): Promise<EncoderSupport>;
}>;

const ProbeOutput = z.object({
  streams: z
    .array(z.object({ codec_type: z.string().optional(), width: z.number().optional(), height: z.number().optional() }))
    .default([]),
});

/** An encode may take as long as the recording; this only stops a hung process. */
const ENCODE_TIMEOUT_MS = 6 * 60 * 60_000;

/** ffmpeg's own words for a failure: its last lines of stderr. */
function reason(error: unknown): string {
  const stderr = (error as { stderr?: unknown }).stderr;
  const text = typeof stderr === 'string' && stderr.trim() !== '' ? stderr : error instanceof Error ? error.message : String(error);
  return text.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
}

/** The adapter in front of the ffmpeg and ffprobe binaries on PATH. */
export function systemFfmpeg(): Ffmpeg {
  let support: Promise<EncoderSupport> | undefined;
  return {
    async probe(path) {
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,width,height', '-of', 'json', path], {
        timeout: 60_000,
        maxBuffer: 4 * 1024 * 1024,
      }).catch((error: unknown) => {
        throw new Error(`ffprobe: ${reason(error)}`);
      });
      const streams = ProbeOutput.parse(JSON.parse(stdout)).streams;
      const video = streams.find((s) => s.codec_type === 'video' && s.width && s.height);
      if (!video?.width || !video.height) throw new Error('the recording has no video stream');
      return { width: video.width, height: video.height, hasAudio: streams.some((s) => s.codec_type === 'audio') };
    },
    async run(args) {
      await run('ffmpeg', [...args], { timeout: ENCODE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }).catch((error: unknown) => {
        throw new Error(`ffmpeg: ${reason(error)}`);
      });
    },
    support() {
      support ??= Promise.all([
        run('ffmpeg', ['-hide_banner', '-encoders'], { timeout: 30_000 }).then(
          (r) => r.stdout,
          () => '',
        ),
        run('ffmpeg', ['-hide_banner', '-filters'], { timeout: 30_000 }).then(
          (r) => r.stdout,
          () => '',
        ),
      ]).then(([encoders, filters]) => ({ nvenc: /\bh264_nvenc\b/.test(encoders), scaleCuda: /\bscale_cuda\b/.test(filters) }));
      return support;
    },
  };
}
