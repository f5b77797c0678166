import type { Api } from '../api/client.js';
import type { Navigate } from '../use-route.js';
import type { Session } from '../session.js';

/** What every app-scoped page gets: the API with the signed-in key and the app it shows. */
export type PageProps = Readonly<{ api: Api; appId: string; session: Session; navigate: Navigate }>;

export function appPath(appId: string, rest = ''): string {
  return `/v1/apps/${encodeURIComponent(appId)}${rest}`;
}
