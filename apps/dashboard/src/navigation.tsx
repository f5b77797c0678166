import { type ReactNode, useCallback } from 'react';
import { Link, useLocation } from 'wouter';
import { BASE, parseRoute, type Route, routePath } from './routes.js';

export type Navigate = (route: Route, options?: { replace?: boolean }) => void;

/** A route's path relative to the router's base (`~` marks a path outside the dashboard). */
export function routeHref(route: Route): string {
  const path = routePath(route);
  return path.startsWith(BASE) ? path.slice(BASE.length) || '/' : `~${path}`;
}

/** The current route (wouter follows the address bar and history) and a typed way to change it. */
export function useDashboardRoute(): [Route, Navigate] {
  const [location, setLocation] = useLocation();
  const navigate = useCallback<Navigate>(
    (next, options) => setLocation(routeHref(next), { replace: options?.replace ?? false }),
    [setLocation],
  );
  return [parseRoute(BASE + location), navigate];
}

export function useNavigate(): Navigate {
  return useDashboardRoute()[1];
}

/** A link to a dashboard route; a plain click navigates in place, modified clicks open tabs. */
export function RouteLink(props: { to: Route; current?: boolean; children: ReactNode }): ReactNode {
  return (
    <Link href={routeHref(props.to)} aria-current={props.current ? 'page' : undefined}>
      {props.children}
    </Link>
  );
}
