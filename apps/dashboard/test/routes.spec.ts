import { describe, expect, it } from 'vitest';
import { parseRoute, type Route, routePath } from '../src/routes.js';

describe(parseRoute.name, () => {
  const appId = 'app_0123456789abcdef';

  it('reads every dashboard page from its path and writes the same path back', () => {
    const routes: Route[] = [
      { page: 'home' },
      { page: 'admin' },
      { page: 'streams', appId },
      { page: 'stream', appId, streamId: 'str_0123456789abcdef' },
      { page: 'recordings', appId },
      { page: 'quotas', appId },
      { page: 'webhooks', appId },
      { page: 'ingresses', appId },
      { page: 'cameras', appId },
      { page: 'usage', appId },
    ];

    for (const route of routes) expect(parseRoute(routePath(route))).toEqual(route);
  });

  it('opens an app on its streams and accepts paths without the trailing slash', () => {
    expect(parseRoute(`/dashboard/apps/${appId}`)).toEqual({ page: 'streams', appId });
    expect(parseRoute('/dashboard')).toEqual({ page: 'home' });
  });

  it('marks anything else unknown rather than guessing', () => {
    expect(parseRoute('/dashboard/apps/app_x/billing')).toEqual({ page: 'unknown', path: '/dashboard/apps/app_x/billing' });
    expect(parseRoute('/dashboard/apps/app_x/quotas/extra')).toEqual({ page: 'unknown', path: '/dashboard/apps/app_x/quotas/extra' });
    expect(parseRoute('/dashboard/nodes')).toEqual({ page: 'unknown', path: '/dashboard/nodes' });
  });
});
