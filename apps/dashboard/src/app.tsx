import type { AppList } from '@tally/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import { createApi } from './api/client.js';
import { ApiProvider, useApiQuery } from './api/queries.js';
import { type Navigate, RouteLink, useDashboardRoute } from './navigation.js';
import { AdminPage } from './pages/admin-page.js';
import { CamerasPage } from './pages/cameras-page.js';
import { IngressesPage } from './pages/ingresses-page.js';
import { QuotasPage } from './pages/quotas-page.js';
import { RecordingsPage } from './pages/recordings-page.js';
import { SignIn } from './pages/sign-in.js';
import { StreamPage } from './pages/stream-page.js';
import { StreamsPage } from './pages/streams-page.js';
import { UsagePage } from './pages/usage-page.js';
import { WebhooksPage } from './pages/webhooks-page.js';
import { APP_PAGES, type AppPage, isAppPage, type Route } from './routes.js';
import { clearSession, loadSession, saveSession, type Session } from './session.js';

const PAGE_TITLES: Readonly<Record<AppPage, string>> = {
  streams: 'Streams',
  recordings: 'Recordings',
  quotas: 'Quotas',
  webhooks: 'Webhooks',
  ingresses: 'Ingresses',
  cameras: 'Cameras',
  usage: 'Usage',
};

export function App(): ReactNode {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [route, navigate] = useDashboardRoute();
  const queries = useQueryClient();

  if (!session) {
    return (
      <SignIn
        appIdHint={'appId' in route ? route.appId : undefined}
        onSignedIn={(signedIn, appId) => {
          saveSession(signedIn);
          setSession(signedIn);
          // The admin key with an app id opens that app rather than the operator view.
          if (signedIn.kind === 'admin' && appId !== '' && route.page === 'home') navigate({ page: 'streams', appId }, { replace: true });
        }}
      />
    );
  }
  return (
    <Shell
      session={session}
      route={route}
      navigate={navigate}
      onSignOut={() => {
        clearSession();
        queries.clear();
        setSession(undefined);
        navigate({ page: 'home' }, { replace: true });
      }}
    />
  );
}

function Shell(props: { session: Session; route: Route; navigate: Navigate; onSignOut: () => void }): ReactNode {
  const api = useMemo(() => createApi(props.session.key), [props.session.key]);
  return (
    <ApiProvider api={api}>
      <Layout {...props} />
    </ApiProvider>
  );
}

function Layout({
  session,
  route,
  navigate,
  onSignOut,
}: {
  session: Session;
  route: Route;
  navigate: Navigate;
  onSignOut: () => void;
}): ReactNode {
  const admin = session.kind === 'admin';
  // Only the admin key lists apps (for the switcher and the operator view).
  const apps = useApiQuery<AppList>('/v1/apps', { enabled: admin, intervalMs: 5_000 });
  const appId = 'appId' in route ? route.appId : session.kind === 'app' ? session.appId : undefined;

  useEffect(() => {
    if (route.page !== 'home') return;
    navigate(session.kind === 'app' ? { page: 'streams', appId: session.appId } : { page: 'admin' }, { replace: true });
  }, [route.page, session, navigate]);

  const appName = apps.data?.items.find((a) => a.id === appId)?.name;
  useEffect(() => {
    const where = route.page === 'admin' ? 'Operator' : isAppPage(route.page) ? PAGE_TITLES[route.page] : 'Stream';
    document.title = `${where}${appName ? ` · ${appName}` : ''} · Tally`;
  }, [route.page, appName]);

  return (
    <div className="layout">
      <header className="topbar">
        <span className="brand">Tally</span>
        {admin ? (
          <label className="switcher">
            Switch app
            <select
              value={appId ?? ''}
              onChange={(e) => {
                const next = e.target.value;
                if (next === '') navigate({ page: 'admin' });
                else navigate({ page: isAppPage(route.page) ? route.page : 'streams', appId: next });
              }}
            >
              <option value="">— operator view —</option>
              {apps.data?.items.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name} ({a.id})
                </option>
              ))}
            </select>
          </label>
        ) : (
          <span className="who">
            App <code>{session.appId}</code>
          </span>
        )}
        <nav aria-label="Pages">
          {appId
            ? APP_PAGES.map((page) => (
                <RouteLink key={page} to={{ page, appId }} current={route.page === page || (page === 'streams' && route.page === 'stream')}>
                  {PAGE_TITLES[page]}
                </RouteLink>
              ))
            : null}
          {admin ? (
            <RouteLink to={{ page: 'admin' }} current={route.page === 'admin'}>
              Admin
            </RouteLink>
          ) : null}
        </nav>
        <span className="muted-text">{admin ? 'admin key' : 'app key'}</span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main className="content">
        <Page session={session} route={route} apps={apps.data?.items ?? []} />
      </main>
    </div>
  );
}

function Page({ session, route, apps }: { session: Session; route: Route; apps: AppList['items'] }): ReactNode {
  switch (route.page) {
    case 'home':
      return null;
    case 'admin':
      return session.kind === 'admin' ? (
        <AdminPage apps={apps} />
      ) : (
        <p role="alert" className="message message-error">
          The operator view needs the admin key; this key opens app {session.appId} only.
        </p>
      );
    case 'unknown':
      return (
        <section>
          <h2>Page not found</h2>
          <p>
            There is no dashboard page at <code>{route.path}</code>. <RouteLink to={{ page: 'home' }}>Go to the start page</RouteLink>.
          </p>
        </section>
      );
    case 'stream':
      return <StreamPage appId={route.appId} session={session} streamId={route.streamId} />;
    case 'streams':
      return <StreamsPage appId={route.appId} session={session} />;
    case 'recordings':
      return <RecordingsPage appId={route.appId} session={session} />;
    case 'quotas':
      return <QuotasPage appId={route.appId} session={session} />;
    case 'webhooks':
      return <WebhooksPage appId={route.appId} session={session} />;
    case 'ingresses':
      return <IngressesPage appId={route.appId} session={session} />;
    case 'cameras':
      return <CamerasPage appId={route.appId} session={session} />;
    case 'usage':
      return <UsagePage appId={route.appId} session={session} />;
  }
}
