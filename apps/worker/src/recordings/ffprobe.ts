import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { z } from 'zod';

const run = promisify(execFile);

const ProbeOutput = z.object({
  format: z
    .object({ duration: z.coerce.number().optional(), size: z.coerce.number().optional(), start_time: z.coerce.number().optional() })
    .optional(),
  streams: z.array(z.object({ codec_type: z.string().optional(), codec_name: z.string().optional() })).default([]),
});

export type Probe = Readonly<{
  durationS: number | undefined;
  /** The first sample's timestamp, seconds (a Track egress file need not start at 0). */
  startS: number | undefined;
  sizeBytes: number | undefined;
  codecs: ReadonlyArray<Readonly<{ type: 'video' | 'audio'; codec: string }>>;
}>;

/** The adapter in front of ffprobe: container duration and size, and each audio/video stream's codec. */
export async function ffprobe(path: string): Promise<Probe> {
  const { stdout } = await run(
    'ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration,size,start_time:stream=codec_type,codec_name', '-of', 'json', path],
    { timeout: 60_000, maxBuffer: 4 * 1024 * 1024 },
  );
  const parsed = ProbeOutput.parse(JSON.parse(stdout));
  return {
    durationS: parsed.format?.duration,
    startS: parsed.format?.start_time,
    sizeBytes: parsed.format?.size,
    codecs: parsed.streams.flatMap((s) =>
      (s.codec_type === 'video' || s.codec_type === 'audio') && s.codec_name ? [{ type: s.codec_type, codec: s.codec_name } as const] : [],
    ),
  };
}
