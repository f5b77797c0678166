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
