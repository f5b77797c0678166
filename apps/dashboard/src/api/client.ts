import type { ErrorBody, LimitRefusal } from '@tally/contracts';

/** Any error body the API sends: every route's, with what ran out when it is a 429. */
export type ApiErrorBody = Readonly<{
  error: ErrorBody['error'] & Partial<Omit<LimitRefusal['error'], 'code' | 'message'>>;
  requestId: string;
}>;

/** The API answered with an error status; `body` is its JSON error when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody | undefined,
    readonly method: string,
    readonly path: string,
  ) {
    super(body?.error.message ?? `HTTP ${status}`);
    this.name = 'ApiError';
  }

  get code(): string | undefined {
    return this.body?.error.code;
  }

  /** 404 from the router itself: this server has no such route (an older or partial deployment). */
  get routeMissing(): boolean {
    return this.status === 404 && /^Cannot [A-Z]+ /.test(this.body?.error.message ?? 'Cannot GET ');
  }
}

/** The request never got an HTTP answer (server down, connection refused, offline). */
export class NetworkError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'NetworkError';
  }
}

export type Api = Readonly<{
  get<T>(path: string, signal?: AbortSignal): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
  /** A binary response (a recording file): `<video src>` cannot send the Authorization header. */
  blob(path: string): Promise<Blob>;
}>;

/** The same-origin /v1 API with the signed-in key. */
export function createApi(key: string, baseUrl = ''): Api {
  async function send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(baseUrl + path, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new NetworkError(method, path, error);
    }
    if (!response.ok) throw new ApiError(response.status, await errorBody(response), method, path);
    return response;
  }

  async function json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const response = await send(method, path, body, signal);
    const text = await response.text();
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  return {
    get: (path, signal) => json('GET', path, undefined, signal),
    post: (path, body) => json('POST', path, body ?? {}),
    patch: (path, body) => json('PATCH', path, body),
    delete: (path) => json('DELETE', path),
    blob: async (path) => (await send('GET', path)).blob(),
  };
}

async function errorBody(response: Response): Promise<ApiErrorBody | undefined> {
  try {
    const parsed: unknown = JSON.parse(await response.text());
    return isErrorBody(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error = value.error;
  return typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string';
}
