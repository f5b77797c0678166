import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppView, CreatedApiKey, StreamView } from '@tally/contracts';
import { ApiClient, startStack, type TestStack } from '@tally/testing';
import { startApi } from '../src/bootstrap.js';

export type ApiHarness = Readonly<{
  stack: TestStack;
  app: NestFastifyApplication;
  admin: ApiClient;
  anonymous: ApiClient;
  stop(): Promise<void>;
}>;

/** The real stack plus the API started through the production bootstrap on the port LiveKit's webhooks target. */
export async function startApiHarness(
  env: Record<string, string> = {},
  options: { egress?: boolean; ingress?: boolean; workers?: 'native' | 'docker' } = {},
): Promise<ApiHarness> {
  const stack = await startStack({
    env,
    ...(options.egress ? { egress: true } : {}),
    ...(options.ingress ? { ingress: true } : {}),
    ...(options.workers ? { workers: options.workers } : {}),
  });
  const app = await startApi(stack.config, { logger: false });
  const anonymous = new ApiClient(`http://127.0.0.1:${stack.config.http.port}`);
  return {
    stack,
    app,
    admin: anonymous.withKey(stack.adminKey),
    anonymous,
    async stop() {
      await app.close();
      await stack.stop();
    },
  };
}

/** An app with its own key, as an operator would set one up. */
export async function createTenant(
  admin: ApiClient,
  name: string,
  quotas?: { maxStreams: number },
): Promise<{ app: AppView; client: ApiClient; key: CreatedApiKey }> {
  const created = await admin.post<AppView>('/v1/apps', { name });
  if (created.status !== 201) throw new Error(`create app: ${created.status} ${JSON.stringify(created.body)}`);
  let app = created.body;
  if (quotas) app = (await admin.patch<AppView>(`/v1/apps/${app.id}`, { quotas })).body;
  const key = await admin.post<CreatedApiKey>(`/v1/apps/${app.id}/keys`);
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${JSON.stringify(key.body)}`);
  return { app, key: key.body, client: admin.withKey(key.body.key) };
}

export async function createStream(client: ApiClient, appId: string, name = 'a stream'): Promise<StreamView> {
  const response = await client.post<StreamView>(`/v1/apps/${appId}/streams`, { name });
  if (response.status !== 201) throw new Error(`create stream: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}
