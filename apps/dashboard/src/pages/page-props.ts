import type { Session } from '../session.js';

/** What every app-scoped page gets: the app it shows and who is signed in. */
export type PageProps = Readonly<{ appId: string; session: Session }>;

export function appPath(appId: string, rest = ''): string {
  return `/v1/apps/${encodeURIComponent(appId)}${rest}`;
}
