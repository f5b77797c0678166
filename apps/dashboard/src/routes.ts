export const BASE = '/dashboard';

export const APP_PAGES = ['streams', 'recordings', 'quotas', 'webhooks', 'ingresses', 'cameras', 'usage'] as const;
export type AppPage = (typeof APP_PAGES)[number];

export type Route =
  | Readonly<{ page: 'home' }>
  | Readonly<{ page: 'admin' }>
  | Readonly<{ page: AppPage; appId: string }>
  | Readonly<{ page: 'stream'; appId: string; streamId: string }>
  | Readonly<{ page: 'unknown'; path: string }>;

/** /dashboard/apps/{appId}/{page}[/{streamId}] and /dashboard/admin; anything else is unknown. */
export function parseRoute(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const parts = rest
    .split('/')
    .filter((p) => p !== '')
    .map(safeDecode);
  if (parts.length === 0) return { page: 'home' };
  if (parts.length === 1 && parts[0] === 'admin') return { page: 'admin' };
  const [first, appId, page, id, ...extra] = parts;
  if (first !== 'apps' || appId === undefined || extra.length > 0) return { page: 'unknown', path: pathname };
  if (page === undefined) return { page: 'streams', appId };
  if (page === 'streams' && id !== undefined) return { page: 'stream', appId, streamId: id };
  if (id === undefined && isAppPage(page)) return { page, appId };
  return { page: 'unknown', path: pathname };
}

export function routePath(route: Route): string {
  switch (route.page) {
    case 'home':
      return `${BASE}/`;
    case 'admin':
      return `${BASE}/admin`;
    case 'stream':
      return `${BASE}/apps/${encodeURIComponent(route.appId)}/streams/${encodeURIComponent(route.streamId)}`;
    case 'unknown':
      return route.path;
    case 'streams':
    case 'recordings':
    case 'quotas':
    case 'webhooks':
    case 'ingresses':
    case 'cameras':
    case 'usage':
      return `${BASE}/apps/${encodeURIComponent(route.appId)}/${route.page}`;
  }
}

export function isAppPage(page: string): page is AppPage {
  return (APP_PAGES as readonly string[]).includes(page);
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
