/**
 * Which budget a route counts against: every authenticated request against its app's request rate,
 * except starts of something that costs media resources (recording, HLS, ingress), which each count
 * against the stricter start rate. Set per route through `@ApiRoute({ rateLimit: 'start' })`.
 */
export type RateLimitClass = 'start';

/** The key of Fastify's route config under which a route's class travels to the limiter. */
export const RATE_LIMIT_CONFIG_KEY = 'tallyRateLimit';
