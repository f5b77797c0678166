import type { AppView, CreatedApiKey, StreamView } from '@tally/contracts';
import type { ApiClient } from '../http.js';

export type Tenant = Readonly<{ app: AppView; client: ApiClient; key: CreatedApiKey }>;

/** An app with its own key, made through the API as an operator would (`admin` holds the admin key). */
export async function createTenant(admin: ApiClient, name: string, quotas?: { maxStreams: number }): Promise<Tenant> {
  const created = await admin.post<AppView>('/v1/apps', { name });
  if (created.status !== 201) throw new Error(`create app: ${created.status} ${JSON.stringify(created.body)}`);
  let app = created.body;
  if (quotas) app = (await admin.patch<AppView>(`/v1/apps/${app.id}`, { quotas })).body;
  const key = await admin.post<CreatedApiKey>(`/v1/apps/${app.id}/keys`);
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${JSON.stringify(key.body)}`);
  return { app, key: key.body, client: admin.withKey(key.body.key) };
}

/** A stream of the app, made through the API with the app's key. */
export async function createStream(client: ApiClient, appId: string, name = 'a stream'): Promise<StreamView> {
  const response = await client.post<StreamView>(`/v1/apps/${appId}/streams`, { name });
  if (response.status !== 201) throw new Error(`create stream: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}
