import { z } from 'zod';

const port = z.coerce.number().int().min(1).max(65_535);
const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a ${protocols.join(' or ')} URL`,
  );

/** Every variable Tally reads; `.env.example` documents each one. */
export const EnvSchema = z.object({
  TALLY_HOME: z.string().min(1).default('/var/lib/tally'),
  TALLY_HOST: z.string().min(1).default('0.0.0.0'),
  TALLY_PORT: port.default(8080),
  TALLY_PUBLIC_URL: url(['http:', 'https:']).optional(),
  TALLY_ADMIN_KEY: z.string().min(24, 'must be at least 24 characters').optional(),
  TALLY_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  TALLY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: url(['postgresql:', 'postgres:']),
  REDIS_URL: url(['redis:', 'rediss:']),
  LIVEKIT_URL: url(['http:', 'https:']),
  LIVEKIT_PUBLIC_URL: url(['ws:', 'wss:']),
  LIVEKIT_API_KEY: z.string().min(3),
  LIVEKIT_API_SECRET: z.string().min(32, 'must be at least 32 characters'),
  TALLY_CAPACITY_PROFILE: z.string().min(1).optional(),
  TALLY_STREAM_JOIN_TIMEOUT_S: z.coerce.number().int().min(10).default(300),
  TALLY_SWEEP_INTERVAL_S: z.coerce.number().int().min(1).default(30),
  TALLY_SECRETS_KEY: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional(),
  TALLY_RECORDINGS_DIR: z.string().min(1).optional(),
  TALLY_S3_BUCKET: z.string().min(1).optional(),
  TALLY_S3_ENDPOINT: url(['http:', 'https:']).optional(),
  TALLY_S3_REGION: z.string().min(1).default('us-east-1'),
  TALLY_S3_ACCESS_KEY: z.string().min(1).optional(),
  TALLY_S3_SECRET_KEY: z.string().min(1).optional(),
  TALLY_S3_FORCE_PATH_STYLE: z.stringbool().default(true),
  TALLY_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(20),
  TALLY_WEBHOOK_BACKOFF_MS: z.coerce.number().int().min(1).default(10_000),
  TALLY_WEBHOOK_MAX_BACKOFF_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(6 * 3_600_000),
  TALLY_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  TALLY_CLUSTER_REDIS_URL: url(['redis:', 'rediss:']).optional(),
  TALLY_JOIN_TOKEN_TTL_S: z.coerce.number().int().min(60).default(3_600),
  TALLY_CAMERA_IDLE_TIMEOUT_S: z.coerce.number().int().min(1).default(15),
  TALLY_CAMERA_VIEWER_LEASE_S: z.coerce.number().int().min(3).default(30),
  TALLY_HLS_DIR: z.string().min(1).optional(),
  TALLY_HLS_RETENTION_S: z.coerce.number().int().min(1).default(300),
  TALLY_APP_RETENTION_S: z.coerce.number().int().min(0).default(7 * 86_400),
});
export type Env = z.infer<typeof EnvSchema>;
