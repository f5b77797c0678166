import { ApiError, createApi } from './api/client.js';
import { describeError } from './api/errors.js';
import type { AppList, AppView } from '@tally/contracts';

/** Who is signed in: the admin key (every app, the operator view) or one app's key. */
export type Session = Readonly<{ key: string; kind: 'admin' }> | Readonly<{ key: string; kind: 'app'; appId: string }>;

// sessionStorage: the key lives as long as the tab and never reaches disk-persistent storage.
const STORAGE_KEY = 'tally.dashboard.session';

export function loadSession(): Session | undefined {
  try {
    const raw = window.sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return undefined;
    const parsed = JSON.parse(raw) as Partial<{ key: unknown; kind: unknown; appId: unknown }>;
    if (typeof parsed.key !== 'string' || parsed.key === '') return undefined;
    if (parsed.kind === 'admin') return { key: parsed.key, kind: 'admin' };
    if (parsed.kind === 'app' && typeof parsed.appId === 'string') return { key: parsed.key, kind: 'app', appId: parsed.appId };
    return undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  window.sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  window.sessionStorage.removeItem(STORAGE_KEY);
}

export class SignInError extends Error {}

/**
 * Finds out what the key opens. GET /v1/apps answers 200 to the admin key and 403 to an app key;
 * the API has no "who am I" route, so an app key also needs its app id, which is checked here.
 */
export async function signIn(rawKey: string, rawAppId: string): Promise<Session> {
  const key = rawKey.trim();
  const appId = rawAppId.trim();
  if (key === '') throw new SignInError('Enter an API key.');
  const api = createApi(key);
  try {
    await api.get<AppList>('/v1/apps');
    return { key, kind: 'admin' };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      throw new SignInError('That key was not accepted: it is unknown or has been revoked. Check that you pasted all of it.');
    }
    if (!(error instanceof ApiError && error.status === 403)) throw new SignInError(describeError(error, 'Signing in'));
  }
  if (appId === '') {
    throw new SignInError('This is an app key: also enter the id of its app (app_…), shown with the key when it was created.');
  }
  try {
    await api.get<AppView>(`/v1/apps/${encodeURIComponent(appId)}`);
    return { key, kind: 'app', appId };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw new SignInError(`This key does not belong to app ${appId}.`);
    if (error instanceof ApiError && error.status === 400) {
      throw new SignInError(`"${appId}" is not an app id: app ids look like app_ followed by 16 lowercase letters and digits.`);
    }
    throw new SignInError(describeError(error, 'Signing in'));
  }
}
