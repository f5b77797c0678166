import { join } from 'node:path';
import { z } from 'zod';

export type TranscodeConfig = Readonly<{
  /** The recordings directory the API and worker use (shared storage on a joined node). */
  recordingsDir: string;
  /** Ladders this agent runs at once; admission decides how many are placed here, this only bounds the process. */
  concurrency: number;
}>;

const TranscodeEnv = z.object({
  TALLY_HOME: z.string().min(1).default('/var/lib/tally'),
  TALLY_RECORDINGS_DIR: z.string().min(1).optional(),
  TALLY_TRANSCODE_CONCURRENCY: z.coerce.number().int().positive().default(8),
});

/** The agent's transcode settings; throws naming the invalid variable. */
export function loadTranscodeConfig(env: NodeJS.ProcessEnv = process.env): TranscodeConfig {
  const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = TranscodeEnv.safeParse(set);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid agent configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    recordingsDir: e.TALLY_RECORDINGS_DIR ?? join(e.TALLY_HOME, 'recordings'),
    concurrency: e.TALLY_TRANSCODE_CONCURRENCY,
  });
}
