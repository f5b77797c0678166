import { type ReactNode, useEffect, useMemo, useState } from 'react';
import { type Api, createApi } from './api/client.js';
import type { AppList } from './api/types.js';
import { AdminPage } from './pages/admin-page.js';
import { CamerasPage } from './pages/cameras-page.js';
import { IngressesPage } from './pages/ingresses-page.js';
import { QuotasPage } from './pages/quotas-page.js';
import { RecordingsPage } from './pages/recordings-page.js';
import { SignIn } from './pages/sign-in.js';
import { StreamPage } from './pages/stream-page.js';
import { StreamsPage } from './pages/streams-page.js';
import { WebhooksPage } from './pages/webhooks-page.js';
import { APP_PAGES, type AppPage, isAppPage, type Route, routePath } from './routes.js';
import { type Navigate, useRoute } from './use-route.js';
import { clearSession, loadSession, saveSession, type Session } from './session.js';
import { usePoll } from './use-poll.js';

const PAGE_TITLES: Readonly<Record<AppPage, string>> = {
  streams: 'Streams',
  recordings: 'Recordings',
  quotas: 'Quotas',
  webhooks: 'Webhooks',
  ingresses: 'Ingresses',
  cameras: 'Cameras',
};

export function App(): ReactNode {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [route, navigate] = useRoute();

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
        setSession(undefined);
        navigate({ page: 'home' }, { replace: true });
      }}
    />
  );
}

function Shell({
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
  const api = useMemo(() => createApi(session.key), [session.key]);
  const admin = session.kind === 'admin';
  // Only the admin key lists apps (for the switcher and the operator view).
  const apps = usePoll(
    admin ? 'apps' : 'no-apps',
    (signal) => (admin ? api.get<AppList>('/v1/apps', signal) : Promise.resolve({ items: [] })),
    admin ? 5_000 : 3_600_000,
  );
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
                <NavLink key={page} to={{ page, appId }} current={route} navigate={navigate} label={PAGE_TITLES[page]} />
              ))
            : null}
          {admin ? <NavLink to={{ page: 'admin' }} current={route} navigate={navigate} label="Admin" /> : null}
        </nav>
        <span className="muted-text">{admin ? 'admin key' : 'app key'}</span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main className="content">
        <Page api={api} session={session} route={route} navigate={navigate} apps={apps.data?.items ?? []} onAppsChanged={apps.reload} />
      </main>
    </div>
  );
}

function Page(props: {
  api: Api;
  session: Session;
  route: Route;
  navigate: Navigate;
  apps: AppList['items'];
  onAppsChanged: () => void;
}): ReactNode {
  const { api, session, route, navigate } = props;
  switch (route.page) {
    case 'home':
      return null;
    case 'admin':
      return session.kind === 'admin' ? (
        <AdminPage api={api} apps={props.apps} navigate={navigate} onAppsChanged={props.onAppsChanged} />
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
            There is no dashboard page at <code>{route.path}</code>.{' '}
            <a href={routePath({ page: 'home' })} onClick={(e) => (e.preventDefault(), navigate({ page: 'home' }))}>
              Go to the start page
            </a>
            .
          </p>
        </section>
      );
    case 'stream':
      return <StreamPage api={api} appId={route.appId} session={session} navigate={navigate} streamId={route.streamId} />;
    case 'streams':
      return <StreamsPage api={api} appId={route.appId} session={session} navigate={navigate} />;
    case 'recordings':
      return <RecordingsPage api={api} appId={route.appId} session={session} navigate={navigate} />;
    case 'quotas':
      return <QuotasPage api={api} appId={route.appId} session={session} navigate={navigate} />;
    case 'webhooks':
      return <WebhooksPage api={api} appId={route.appId} session={session} navigate={navigate} />;
    case 'ingresses':
      return <IngressesPage api={api} appId={route.appId} session={session} navigate={navigate} />;
    case 'cameras':
      return <CamerasPage api={api} appId={route.appId} session={session} navigate={navigate} />;
  }
}

function NavLink({ to, current, navigate, label }: { to: Route; current: Route; navigate: Navigate; label: string }): ReactNode {
  const active = current.page === to.page || (to.page === 'streams' && current.page === 'stream');
  return (
    <a
      href={routePath(to)}
      aria-current={active ? 'page' : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {label}
    </a>
  );
}
