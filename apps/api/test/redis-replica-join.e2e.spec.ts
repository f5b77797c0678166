import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { join } from 'node:path';
import type { JoinTokenView } from '@tally/contracts';
import { freePort, startOriginSentinel, type TestOriginSentinel, waitFor } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from './api-harness.js';
import { addHost, forward, installOnNode, nodeHome, readableCheckout, removeHome, type TwoHosts } from './joined-node.js';

const REPLICATION_PASSWORD = randomBytes(16).toString('hex');
const SENTINEL_PASSWORD = randomBytes(16).toString('hex');

/**
 * A node joined with `./install.sh --join --redis-replica` (docs/adr/0040-redis-sentinel.md): the
 * origin is the test stack with what `--redis-sentinel` gives it (the replication and Sentinel users
 * on its Redis, a Sentinel on the origin's address); the node runs a replica of that Redis and a
 * Sentinel, with credentials handed over in the join.
 */
describe('install.sh --join --redis-replica', () => {
  let hosts: TwoHosts;
  let sut: ApiHarness;
  let originUrl: string;
  let originSentinel: TestOriginSentinel;
  let home: string;
  let primary: string;
  const forwarders: Server[] = [];
  const name = `replica-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    await readableCheckout();
    hosts = await addHost();
    const [redisPort, apiPort, sentinelPort] = [await freePort(), await freePort(), await freePort()];
    originUrl = `http://${hosts.originIp}:${apiPort}`;
    primary = `${hosts.originIp}:${redisPort}`;
    // The origin as install.sh --cluster-bind --redis-sentinel leaves it: its Redis on the cluster
    // address, the users replicas and Sentinels sign in with, a Sentinel, and tally.env's settings.
    sut = await startApiHarness({
      TALLY_CLUSTER_REDIS_URL: `redis://${primary}`,
      TALLY_PUBLIC_URL: originUrl,
      TALLY_CLUSTER_REDIS_SENTINELS: `${hosts.originIp}:${sentinelPort}`,
      TALLY_CLUSTER_REDIS_REPLICATION_PASSWORD: REPLICATION_PASSWORD,
      TALLY_CLUSTER_REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
    });
    forwarders.push(await forward(hosts.originIp, redisPort, sut.stack.redis.port));
    forwarders.push(await forward(hosts.originIp, apiPort, sut.stack.config.http.port));
    const admin = new Redis(sut.stack.redis.url);
    await admin.call('ACL', 'SETUSER', 'tally-replication', 'on', `>${REPLICATION_PASSWORD}`, '+psync', '+replconf', '+ping');
    await admin.call(
      'ACL',
      ...['SETUSER', 'tally-sentinel', 'on', `>${SENTINEL_PASSWORD}`, 'allchannels', '+multi', '+slaveof', '+ping', '+exec'],
      ...['+subscribe', '+config|rewrite', '+role', '+publish', '+info', '+client|setname', '+client|kill', '+script|kill'],
    );
    admin.disconnect();
    originSentinel = await startOriginSentinel(hosts.originIp, sentinelPort, primary, SENTINEL_PASSWORD);
    home = nodeHome();
  });

  afterAll(async () => {
    if (home && existsSync(join(home, 'run', 'mode'))) await installOnNode(hosts.ns, ['--stop', '--home', home]);
    for (const server of forwarders) server.close();
    await originSentinel?.stop();
    await sut?.stop();
    await hosts?.remove();
    if (home) removeHome(home);
  });

  const joinArgs = (token: string, nodeHomeDir: string) => [
    ...['--join', originUrl, '--token', token, '--role', 'media', '--name', name, '--redis-replica', '--insecure-http'],
    ...['--home', nodeHomeDir, '--no-provision', '--no-systemd', '--no-sysctl', '--offline', '--node-ip', hosts.nodeIp],
  ];
  /** INFO replication of the node's server, asked as the Sentinels' user (which may). */
  const replication = async () => {
    const client = new Redis({
      host: hosts.nodeIp,
      port: 6379,
      username: 'tally-sentinel',
      password: SENTINEL_PASSWORD,
      lazyConnect: true,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return Object.fromEntries(
        (await client.info('replication'))
          .split('\r\n')
          .filter((l) => l.includes(':'))
          .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]),
      );
    } finally {
      client.disconnect();
    }
  };
  /** A connection to the node's replica as the API's user (the replica holds the primary's server users). */
  const replicaAsApi = async () => {
    const admin = new URL(sut.stack.redis.url);
    const client = new Redis({
      host: hosts.nodeIp,
      port: 6379,
      ...(admin.username === '' ? {} : { username: decodeURIComponent(admin.username) }),
      ...(admin.password === '' ? {} : { password: decodeURIComponent(admin.password) }),
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  /** The joined nodes' users on the node's replica. */
  const replicaNodeUsers = async () => {
    const client = await replicaAsApi();
    try {
      return ((await client.call('ACL', 'USERS')) as string[]).filter((user) => user.startsWith('tally-node-'));
    } finally {
      client.disconnect();
    }
  };
  /** A field of `SENTINEL master tally` on the node's Sentinel (its default user may ask). */
  const nodeSentinel = async (field: string) => {
    const client = new Redis({ host: hosts.nodeIp, port: 26379, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const flat = (await client.call('SENTINEL', 'master', 'tally')) as string[];
      return flat[flat.indexOf(field) + 1];
    } catch {
      return undefined;
    } finally {
      client.disconnect();
    }
  };

  it('--help explains --redis-replica and --redis-sentinel', async () => {
    const help = await installOnNode(hosts.ns, ['--help']);
    expect(help.code).toBe(0);
    expect(help.output).toContain('--redis-replica [--redis-port N] [--sentinel-port N]');
    expect(help.output).toMatch(/--redis-replica {5}\(the token made with redisReplica: true/);
    expect(help.output).toMatch(/--redis-sentinel {4}\(origin, with --cluster-bind\)/);
    expect(help.output).toContain('quorum 2');
    const misplaced = await installOnNode(hosts.ns, ['--redis-replica', '--home', `${home}-x`, '--dry-run']);
    expect(misplaced.code).not.toBe(0);
    expect(misplaced.output).toContain('--redis-replica goes with --join');
  });

  it('--dry-run shows the replica and Sentinel steps of a node and of the origin, and changes nothing', { timeout: 120_000 }, async () => {
    const dryHome = `${home}-dry`;
    const dry = await installOnNode(hosts.ns, [...joinArgs('tjt_x', dryHome), '--dry-run']);
    expect(dry.code, dry.output).toBe(0);
    for (const step of [
      `{name: ${name}, role: media, redisReplica: true, token}`,
      `a replica on ${hosts.nodeIp}:6379 and a Sentinel on ${hosts.nodeIp}:26379 (group tally, quorum 2; Sentinels ${hosts.nodeIp}:26379,ORIGIN:26379)`,
      `would write ${dryHome}/redis/redis.conf`,
      `would write ${dryHome}/sentinel/sentinel.conf`,
      'would start redis',
      `${dryHome}/sentinel/sentinel.conf --sentinel (as tally-redis`,
    ])
      expect(dry.output).toContain(step);
    expect(existsSync(dryHome)).toBe(false);

    // The origin's side: its Sentinel on the cluster address, which --redis-sentinel needs.
    const origin = ['--home', `${home}-origin`, '--offline', '--no-systemd', '--no-sysctl', '--dry-run'];
    const sentinel = await installOnNode(hosts.ns, [...origin, '--cluster-bind', hosts.nodeIp, '--redis-sentinel']);
    expect(sentinel.code, sentinel.output).toBe(0);
    for (const step of [
      `redis: Sentinel on ${hosts.nodeIp}:26379 (group tally, quorum 2)`,
      `would write ${home}-origin/sentinel/sentinel.conf`,
      `${home}-origin/sentinel/sentinel.conf --sentinel (as tally-redis`,
    ])
      expect(sentinel.output).toContain(step);
    expect(existsSync(`${home}-origin`)).toBe(false);
    const alone = await installOnNode(hosts.ns, [...origin, '--redis-sentinel']);
    expect(alone.code).not.toBe(0);
    expect(alone.output).toContain('--redis-sentinel needs --cluster-bind IP');
  });

  it(
    'joins with a replica in sync and a Sentinel that sees the primary and the origin Sentinel; a re-run keeps them; --leave hands over',
    { timeout: 600_000 },
    async () => {
      const created = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { role: 'media', name, redisReplica: true });
      expect(created.status).toBe(201);
      expect(created.body.command).toContain('--redis-replica');

      const joined = await installOnNode(hosts.ns, joinArgs(created.body.token, home), { TALLY_HEARTBEAT_INTERVAL_S: '1' });

      expect(joined.code, joined.output).toBe(0);
      expect(joined.output).toContain('in sync');
      // The replica follows the origin's Redis, and holds what the origin wrote after the join.
      expect(await replication()).toMatchObject({ role: 'slave', master_host: hosts.originIp, master_link_status: 'up' });
      const admin = new Redis(sut.stack.redis.url);
      await admin.set('tally:replica-probe', name);
      admin.disconnect();
      await waitFor('the write on the replica', async () => {
        const client = new Redis({ host: hosts.nodeIp, port: 6379, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        client.on('error', () => undefined);
        try {
          await client.connect();
          return (await client.get('tally:replica-probe')) === name ? true : undefined;
        } finally {
          client.disconnect();
        }
      });
      // Both Sentinels see the primary, the replica and each other: with a second replica node, three.
      expect(await nodeSentinel('ip')).toBe(hosts.originIp);
      expect(await nodeSentinel('num-other-sentinels')).toBe('1');
      await waitFor('the origin Sentinel to see the replica and the node Sentinel', async () =>
        (await originSentinel.masterField('num-slaves')) === '1' && (await originSentinel.masterField('num-other-sentinels')) === '1'
          ? true
          : undefined,
      );
      // Every process of the node finds the primary through the Sentinels, its own first.
      const env = readFileSync(join(home, 'tally.env'), 'utf8');
      expect(env).toContain(`REDIS_SENTINELS=${hosts.nodeIp}:26379,${originSentinel.address}`);
      expect(readFileSync(join(home, 'livekit.yaml'), 'utf8')).toContain(
        `sentinel_addresses:\n    - ${hosts.nodeIp}:26379\n    - ${originSentinel.address}`,
      );
      // The replica's config: the origin's users as hashes only, the replication password for its own link.
      const conf = readFileSync(join(home, 'redis', 'redis.conf'), 'utf8');
      expect(conf).toContain(`replicaof ${hosts.originIp} ${primary.split(':')[1]}`);
      expect(conf).toMatch(/^user tally-sentinel on .*#[0-9a-f]{64}/m);
      expect(conf).not.toContain(SENTINEL_PASSWORD);

      // Redis does not replicate ACLs: the API writes the node users on each replica too, so a replica
      // promoted in a failover lets the nodes in at once. The node's own user reaches its replica at the
      // next sync (the replica did not run yet when the user was made); a node joined now, at once;
      // one removed is deleted there at once; one deleted there by hand comes back at the next sync.
      const ownUser = `tally-node-${name}`;
      await waitFor('the node user on the replica', async () => ((await replicaNodeUsers()).includes(ownUser) ? true : undefined), 30_000);
      const other = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { role: 'worker', name: `${name}-w` });
      expect(other.status).toBe(201);
      const otherJoined = await sut.anonymous.post('/v1/nodes/join', { token: other.body.token, role: 'worker', name: `${name}-w` });
      expect(otherJoined.status, JSON.stringify(otherJoined.body)).toBe(200);
      expect(await replicaNodeUsers()).toEqual(expect.arrayContaining([ownUser, `tally-node-${name}-w`]));
      expect((await sut.admin.delete(`/v1/nodes/${name}-w`)).status).toBe(204);
      expect(await replicaNodeUsers()).not.toContain(`tally-node-${name}-w`);
      const byHand = await replicaAsApi();
      await byHand.call('ACL', 'DELUSER', ownUser);
      byHand.disconnect();
      expect(await replicaNodeUsers()).not.toContain(ownUser);
      await waitFor(
        'the node user back on the replica',
        async () => ((await replicaNodeUsers()).includes(ownUser) ? true : undefined),
        30_000,
      );

      const again = await installOnNode(hosts.ns, joinArgs('tjt_unused', home), { TALLY_HEARTBEAT_INTERVAL_S: '1' });
      expect(again.code, again.output).toBe(0);
      expect(again.output).toContain('sentinel.conf: kept');
      expect(await replication()).toMatchObject({ role: 'slave', master_link_status: 'up' });

      const left = await installOnNode(hosts.ns, ['--leave', '--home', home], { TALLY_LEAVE_TIMEOUT_S: '60' });

      expect(left.code, left.output).toBe(0);
      expect(left.output).toContain(`sentinel ${originSentinel.address}: reset`);
      expect(existsSync(join(home, 'redis'))).toBe(false);
      await waitFor('the origin Sentinel to forget the replica and the node Sentinel', async () =>
        (await originSentinel.masterField('num-slaves')) === '0' && (await originSentinel.masterField('num-other-sentinels')) === '0'
          ? true
          : undefined,
      );
    },
  );
});
