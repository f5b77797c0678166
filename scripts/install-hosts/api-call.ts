export type Json = Record<string, unknown>;

/** `call(key, method, path, status, body?)` against the installed API at `base`: the JSON answer, or an error naming what came back instead of `status`. */
export function apiCaller(base: string) {
  return async function call(key: string, method: string, path: string, status: number, body?: Json): Promise<Json> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text === '' ? {} : (JSON.parse(text) as Json);
  };
}

/** Thrown by a `waitFor` probe when what it waits for can no longer happen (a recording that failed): ends the wait at once. */
export class GaveUp extends Error {}

/**
 * Polls `probe` every half second until it returns a value. Other errors (the API restarting during an
 * upgrade, a connection refused) are retried until `timeoutMs`, and the last one is named in the timeout.
 */
export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      if (error instanceof GaveUp) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out waiting for ${what}${cause}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Starts an `auto` recording of the stream at `streamPath` (`/v1/apps/A/streams/S`) once it records
 * one video and one audio track. The API records the tracks LiveKit lists when it is asked; a
 * publisher's second track (an ingress publishes them one after the other) can be listed a moment
 * later. A recording that saw fewer (its reason names the tracks) is stopped and asked for again.
 */
export async function recordBothTracks(
  call: ReturnType<typeof apiCaller>,
  key: string,
  streamPath: string,
  log: (line: string) => void,
): Promise<Json> {
  const recordings = streamPath.replace(/\/streams\/[^/]+$/, '/recordings');
  for (let attempt = 1; ; attempt++) {
    const started = await call(key, 'POST', `${streamPath}/recordings`, 201, {});
    const reason = String(started.reason);
    if (reason.includes('1 video and 1 audio')) return started;
    log(`recording ${String(started.id)} saw fewer tracks than published (${reason}); stopping it and asking again`);
    await call(key, 'POST', `${recordings}/${String(started.id)}/stop`, 200);
    if (attempt === 10) throw new Error(`ten recordings in a row saw fewer tracks than published (${reason})`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
