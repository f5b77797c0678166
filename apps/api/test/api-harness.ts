import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiClient, type Child, freePort, type StackOptions, startAppProcess, startStack, type TestStack } from '@tally/testing';
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
  options: {
    egress?: boolean;
    ingress?: boolean;
    objectStore?: StackOptions['objectStore'];
    workers?: 'native' | 'docker';
    nodeBudget?: StackOptions['nodeBudget'];
    turn?: StackOptions['turn'];
  } = {},
): Promise<ApiHarness> {
  const stack = await startStack({
    env,
    ...(options.nodeBudget ? { nodeBudget: options.nodeBudget } : {}),
    ...(options.egress ? { egress: true } : {}),
    ...(options.ingress ? { ingress: true } : {}),
    ...(options.objectStore ? { objectStore: options.objectStore } : {}),
    ...(options.workers ? { workers: options.workers } : {}),
    ...(options.turn ? { turn: options.turn } : {}),
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

export type ApiReplicas = Readonly<{
  stack: TestStack;
  /** One admin client per replica, in start order. */
  clients: readonly ApiClient[];
  /** Stops the replicas, then the stack. */
  stop(): Promise<void>;
}>;

/**
 * The real stack plus `count` API processes on its one database and Redis, each its own OS process as
 * installed: the first on the stack's port (the one LiveKit's webhooks target), the others on free ports.
 * Only the replicas get `options.env` (over the stack's env); their logs go to tmp as
 * `tally-<logName>-a-<pid>.log`, `-b-`, ...
 */
export async function startReplicas(count: number, options: { env?: Record<string, string>; logName?: string } = {}): Promise<ApiReplicas> {
  const stack = await startStack();
  const env = { ...stack.env, ...options.env };
  const ports = [env['TALLY_PORT'] ?? ''];
  while (ports.length < count) ports.push(String(await freePort()));
  const log = (i: number) => join(tmpdir(), `tally-${options.logName ?? 'api'}-${String.fromCharCode(97 + i)}-${process.pid}.log`);
  const started = await Promise.allSettled(ports.map((port, i) => startAppProcess('api', { ...env, TALLY_PORT: port }, log(i))));
  const processes = started.flatMap((s): Child[] => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await stack.stop();
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return { stack, clients: ports.map((port) => new ApiClient(`http://127.0.0.1:${port}`, stack.adminKey)), stop };
}

export { createStream, createTenant } from '@tally/testing';
