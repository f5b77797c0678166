import { useCallback, useEffect, useState } from 'react';
import { parseRoute, type Route, routePath } from './routes.js';

export type Navigate = (route: Route, options?: { replace?: boolean }) => void;

/** The current route from the address bar; navigating pushes history so Back works. */
export function useRoute(): [Route, Navigate] {
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.pathname));
  useEffect(() => {
    const onPop = (): void => setRoute(parseRoute(window.location.pathname));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = useCallback<Navigate>((next, options) => {
    const path = routePath(next);
    if (options?.replace) window.history.replaceState(null, '', path);
    else if (path !== window.location.pathname) window.history.pushState(null, '', path);
    setRoute(next);
  }, []);
  return [route, navigate];
}
