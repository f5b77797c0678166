export type ApiResponse<T = unknown> = Readonly<{ status: number; body: T; headers: Headers }>;

/** A thin JSON client for the real HTTP API, as an app developer would call it. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly key?: string,
  ) {}

  withKey(key: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, key);
  }

  /** The same key, sent to another API process. */
  at(baseUrl: string): ApiClient {
    return new ApiClient(baseUrl, this.key);
  }

  get<T = unknown>(path: string): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path);
  }

  post<T = unknown>(path: string, body?: unknown): Promise<ApiResponse<T>> {
    return this.request<T>('POST', path, body ?? {});
  }

  patch<T = unknown>(path: string, body: unknown): Promise<ApiResponse<T>> {
    return this.request<T>('PATCH', path, body);
  }

  delete<T = unknown>(path: string): Promise<ApiResponse<T>> {
    return this.request<T>('DELETE', path);
  }

  /** The unparsed response, for files and redirects. */
  raw(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(this.baseUrl + path, {
      headers: { ...(this.key ? { authorization: `Bearer ${this.key}` } : {}), ...headers },
      redirect: 'manual',
    });
  }

  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const response = await fetch(this.baseUrl + path, {
      method,
      headers: {
        ...(this.key ? { authorization: `Bearer ${this.key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
  }
}
