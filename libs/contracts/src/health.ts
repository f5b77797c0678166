import { z } from 'zod';

export const HealthCheck = z.object({ ok: z.boolean(), ms: z.number(), error: z.string().optional() });
export const Health = z
  .object({
    status: z.enum(['ok', 'degraded']),
    checks: z.object({ postgres: HealthCheck, redis: HealthCheck, livekit: HealthCheck }),
  })
  .meta({ id: 'Health' });
export type Health = z.infer<typeof Health>;
