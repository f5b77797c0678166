/**
 * Resolves when the promise settles or after `ms`, whichever comes first; rejects only with the
 * promise's own error. For shutdown steps that must not wait on an unreachable Redis.
 */
export function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise.then(() => undefined), timeout]).finally(() => clearTimeout(timer));
}
