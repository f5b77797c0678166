import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisSentinel } from '@tally/config';
import { Redis } from 'ioredis';
import { type Child, startChild } from './child.js';
import { freePort, waitFor } from './ports.js';

export type TestRedisSentinelGroup = Readonly<{
  /** Tally's user on the servers and the Sentinels, at the first primary (what REDIS_URL holds). */
  url: string;
  /** The first primary's port. */
  port: number;
  sentinel: RedisSentinel;
  /** REDIS_SENTINELS / REDIS_SENTINEL_NAME for a Tally process. */
  env: Readonly<Record<string, string>>;
  /** The port of the server the Sentinels name as primary now (asked of the first Sentinel that answers). */
  primaryPort(): Promise<number | undefined>;
  /**
   * A failover asked of a Sentinel (`SENTINEL FAILOVER`, as an operator hands the primary role over):
   * the replica is promoted while the primary still runs, which the Sentinels then make a replica of
   * it. Resolves with the new primary's port once the Sentinels name it.
   */
  failover(): Promise<number>;
  /** Whether the primary the Sentinels name has its replica connected and in sync. */
  replicaInSync(): Promise<boolean>;
  /** `kill -9` of the server that is primary now; resolves with its port. */
  killPrimary(): Promise<number>;
  /** What the Sentinels' ACLs refused since they started (`ACL LOG`), as `user: command/key/channel`. */
  sentinelDenials(): Promise<string[]>;
  stop(): Promise<void>;
}>;

const NAME = 'tally';
/** What the installer writes (docs/adr/0040-redis-sentinel.md): down after 5 s without an answer. */
const DOWN_AFTER_MS = 5_000;

type Server = Readonly<{ port: number; child: Child }>;

/** What the installer lets anyone ask a Sentinel (its `default` user): docs/adr/0040-redis-sentinel.md. */
const SENTINEL_READER_RULES =
  'allchannels -@all +auth +hello +ping +client|setname +client|getname +subscribe +psubscribe +unsubscribe +punsubscribe +sentinel|get-master-addr-by-name +sentinel|sentinels +sentinel|replicas +sentinel|slaves +sentinel|master +sentinel|masters +role +info';

/**
 * A Redis primary, one replica and three Sentinels (quorum two) on loopback, laid out as the
 * installer lays them out: the same ACL users written on every server (Redis does not replicate
 * ACLs), a replication user and a user the Sentinels monitor with; the Sentinels answer anyone which
 * server is primary and nothing else.
 */
export async function startRedisSentinelGroup(): Promise<TestRedisSentinelGroup> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-redis-ha-'));
  const secret = { tally: hex(), replication: hex(), sentinel: hex() };
  const primaryPort = await freePort();
  const replicaPort = await freePort();
  const serverAcl = [
    'user default off',
    `user tally on >${secret.tally} ~* &* +@all`,
    `user tally-replication on >${secret.replication} +psync +replconf +ping`,
    // Redis' documented minimum for a Sentinel's user on the servers it monitors.
    `user tally-sentinel on >${secret.sentinel} allchannels +multi +slaveof +ping +exec +subscribe +config|rewrite +role +publish +info +client|setname +client|kill +script|kill`,
    'masteruser tally-replication',
    `masterauth ${secret.replication}`,
  ];
  const servers: Server[] = [];
  servers.push(startServer(dir, 'primary', primaryPort, serverAcl));
  servers.push(startServer(dir, 'replica', replicaPort, [...serverAcl, `replicaof 127.0.0.1 ${primaryPort}`]));
  const url = `redis://tally:${secret.tally}@127.0.0.1:${primaryPort}`;
  await waitFor('redis primary', () => ping(url));
  await waitFor('redis replica in sync', async () => {
    const info = await command(`redis://tally:${secret.tally}@127.0.0.1:${replicaPort}`, 'info', 'replication');
    return info?.includes('master_link_status:up') ? true : undefined;
  });
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const sentinels = sentinelPorts.map((port, i) =>
    startSentinel(join(dir, `sentinel-${i}`), port, primaryPort, [
      // Tally's processes and LiveKit's, without credentials: which server is primary, and news of
      // a failover; nothing that changes the group.
      `user default on nopass ${SENTINEL_READER_RULES}`,
      // Sentinels sign in to each other as this user.
      `user tally-sentinel on >${secret.sentinel} allchannels +@all`,
      `sentinel auth-user ${NAME} tally-sentinel`,
      `sentinel auth-pass ${NAME} ${secret.sentinel}`,
      'sentinel sentinel-user tally-sentinel',
      `sentinel sentinel-pass ${secret.sentinel}`,
    ]),
  );
  const sentinelUrl = (port: number) => `redis://127.0.0.1:${port}`;
  // Every Sentinel knows the replica and the two other Sentinels: a failover can be agreed on.
  await waitFor(
    'sentinels to see each other and the replica',
    async () => {
      for (const port of sentinelPorts) {
        const master = await command(sentinelUrl(port), 'sentinel', 'master', NAME);
        if (!master) return undefined;
        const fields = Object.fromEntries(pairs(master as unknown as string[]));
        if (fields['num-other-sentinels'] !== '2' || fields['num-slaves'] !== '1') return undefined;
      }
      return true;
    },
    60_000,
  );
  const primaryPortNow = async (): Promise<number | undefined> => {
    for (const port of sentinelPorts) {
      const address = (await command(sentinelUrl(port), 'sentinel', 'get-master-addr-by-name', NAME)) as unknown as string[] | undefined;
      if (address) return Number(address[1]);
    }
    return undefined;
  };
  const sentinel: RedisSentinel = { name: NAME, addresses: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })) };
  return {
    url,
    port: primaryPort,
    sentinel,
    env: { REDIS_SENTINELS: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','), REDIS_SENTINEL_NAME: NAME },
    primaryPort: primaryPortNow,
    async failover() {
      const before = await primaryPortNow();
      const admin = `redis://tally-sentinel:${secret.sentinel}@127.0.0.1:${sentinelPorts[0]}`;
      // Refused (NOGOODSLAVE, INPROG) until the replica has reported in since the last failover.
      await waitFor(
        'a Sentinel to start the failover',
        async () => ((await command(admin, 'sentinel', 'failover', NAME)) === 'OK' ? true : undefined),
        120_000,
      );
      return waitFor(
        'the Sentinels to name the promoted replica',
        async () => {
          const port = await primaryPortNow();
          return port !== undefined && port !== before ? port : undefined;
        },
        120_000,
      );
    },
    async replicaInSync() {
      const port = await primaryPortNow();
      const info = port === undefined ? undefined : await command(`redis://tally:${secret.tally}@127.0.0.1:${port}`, 'info', 'replication');
      return info?.includes('role:master') === true && /slave0:.*state=online/.test(info);
    },
    async killPrimary() {
      const port = await primaryPortNow();
      const server = servers.find((s) => s.port === port);
      if (!server) throw new Error(`the Sentinels name no server of this group as primary (port ${port})`);
      await server.child.stop('SIGKILL');
      return server.port;
    },
    async sentinelDenials() {
      const denials: string[] = [];
      for (const port of sentinelPorts) {
        const log = (await command(`redis://tally-sentinel:${secret.sentinel}@127.0.0.1:${port}`, 'acl', 'log')) as unknown as
          string[][] | undefined;
        if (log === undefined) throw new Error(`Sentinel :${port} did not answer ACL LOG`);
        for (const entry of log) {
          const fields = Object.fromEntries(pairs(entry));
          denials.push(`:${port} ${fields['username']}: ${fields['reason']} ${fields['object']}`);
        }
      }
      return denials;
    },
    async stop() {
      await Promise.all(sentinels.map((s) => s.stop()));
      await Promise.all(servers.map((s) => s.child.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function startServer(dir: string, name: string, port: number, lines: string[]): Server {
  const home = join(dir, name);
  mkdirSync(home);
  const conf = join(home, 'redis.conf');
  writeFileSync(
    conf,
    [`bind 127.0.0.1`, `port ${port}`, `dir ${home}`, `save ""`, 'appendonly no', ...lines].join('\n') + '\n',
    // The servers' passwords are in it.
    { mode: 0o600 },
  );
  return { port, child: startChild('redis-server', [conf], join(home, 'redis.log')) };
}

/** Sentinel rewrites its config file (what it learned of the group), so the file is its own. */
function startSentinel(
  home: string,
  port: number,
  primaryPort: number,
  lines: string[],
  where: Readonly<{ bind: string; primaryHost: string }> = { bind: '127.0.0.1', primaryHost: '127.0.0.1' },
): Child {
  mkdirSync(home, { recursive: true });
  const conf = join(home, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `bind ${where.bind}`,
      `port ${port}`,
      `dir ${home}`,
      'sentinel resolve-hostnames no',
      `sentinel monitor ${NAME} ${where.primaryHost} ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${NAME} ${DOWN_AFTER_MS}`,
      `sentinel failover-timeout ${NAME} 10000`,
      `sentinel parallel-syncs ${NAME} 1`,
      ...lines,
    ].join('\n') + '\n',
    { mode: 0o600 },
  );
  return startChild('redis-server', [conf, '--sentinel'], join(home, 'sentinel.log'));
}

async function ping(url: string): Promise<true | undefined> {
  return (await command(url, 'ping')) === 'PONG' ? true : undefined;
}

/** One command on a fresh connection; undefined when the server does not answer. */
async function command(url: string, name: string, ...args: string[]): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.call(name, ...args)) as string;
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

function pairs(flat: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

function hex(): string {
  return randomBytes(16).toString('hex');
}

export type TestOriginSentinel = Readonly<{
  /** host:port, as the other Sentinels and Tally's processes reach it. */
  address: string;
  /** A field of `SENTINEL master tally` (num-slaves, num-other-sentinels, ip, port, flags, …); undefined without an answer. */
  masterField(field: string): Promise<string | undefined>;
  stop(): Promise<void>;
}>;

/**
 * The Sentinel `install.sh --redis-sentinel` runs on an origin: on `host`:`port`, monitoring the primary
 * at `primary` (host:port) as the group `tally` with quorum two, anyone may ask it which server is
 * primary and the Sentinels sign in to it and to the servers as `tally-sentinel` with `password`.
 */
export async function startOriginSentinel(host: string, port: number, primary: string, password: string): Promise<TestOriginSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-origin-sentinel-'));
  const [primaryHost, primaryPort] = primary.split(':');
  const child = startSentinel(
    dir,
    port,
    Number(primaryPort),
    [
      `user default on nopass ${SENTINEL_READER_RULES}`,
      `user tally-sentinel on >${password} allchannels +@all`,
      `sentinel auth-user ${NAME} tally-sentinel`,
      `sentinel auth-pass ${NAME} ${password}`,
      'sentinel sentinel-user tally-sentinel',
      `sentinel sentinel-pass ${password}`,
      `sentinel announce-ip ${host}`,
    ],
    { bind: `127.0.0.1 ${host}`, primaryHost: primaryHost ?? '127.0.0.1' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const masterField = async (field: string) => {
    const master = (await command(url, 'sentinel', 'master', NAME)) as unknown as string[] | undefined;
    return master ? Object.fromEntries(pairs(master))[field] : undefined;
  };
  await waitFor('the origin sentinel', async () => ((await masterField('ip')) === undefined ? undefined : true), 30_000);
  return {
    address: `${host}:${port}`,
    masterField,
    async stop() {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
