import { type FormEvent, type ReactNode, useState } from 'react';
import { TextField } from '../components/form.js';
import { type Session, SignInError, signIn } from '../session.js';

/** Sign-in with an API key; an app key also needs its app id (prefilled from a deep link). */
export function SignIn({
  appIdHint,
  onSignedIn,
}: {
  appIdHint: string | undefined;
  onSignedIn: (session: Session, appId: string) => void;
}): ReactNode {
  const [key, setKey] = useState('');
  const [appId, setAppId] = useState(appIdHint ?? '');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signIn(key, appId), appId.trim());
    } catch (caught) {
      setError(caught instanceof SignInError ? caught.message : `Signing in failed: ${String(caught)}`);
      setBusy(false);
    }
  };

  return (
    <main className="signin">
      <form className="panel" aria-labelledby="signin-heading" onSubmit={(e) => void submit(e)}>
        <h1 id="signin-heading">Tally dashboard</h1>
        <TextField label="API key" type="password" value={key} onChange={setKey} autoComplete="off" spellCheck={false} autoFocus />
        <TextField label="App id" value={appId} onChange={setAppId} placeholder="app_…" spellCheck={false} aria-describedby="appid-help" />
        <p id="appid-help" className="muted-text">
          Needed with an app key (it opens that app only). Leave it empty with the admin key to see every app and the nodes.
        </p>
        {error ? (
          <p role="alert" className="message message-error">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="muted-text">The key stays in this browser tab (session storage) and is sent only to this server’s /v1 API.</p>
      </form>
    </main>
  );
}
