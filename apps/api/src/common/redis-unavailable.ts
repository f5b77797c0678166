/**
 * Whether `error` is ioredis saying it has no usable server right now: a command that waited
 * through its reconnect attempts, a connection being closed, or a promoted replica still loading
 * its data. Redis restarting or failing over is then answered 503 naming Redis, not 500.
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'MaxRetriesPerRequestError' || error.message === 'Connection is closed.' || error.message.startsWith('LOADING ');
}
