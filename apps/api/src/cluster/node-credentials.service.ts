import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { JoinedNodeRole } from '@tally/contracts';
import { NodeCredentialsRepository } from './node-credentials.repository.js';
import { isNodeRedisUser, nodeAclSetUser, nodeRedisUser, sha256Hex } from './node-grants.js';
import { holdsOwnLivekitKey, type LivekitCredentials, NodeLivekitKeys } from './node-livekit-keys.js';
import { type AclServer, RedisAcl } from './redis-acl.js';

/**
 * How often the node users are applied to every replica: a replica that joined or restarted since
 * holds none of them until then.
 */
const REPLICA_SYNC_INTERVAL_MS = 15_000;

type AppliedNode = Readonly<{ nodeId: string; role: JoinedNodeRole; passwordSha256: string }>;

export type NodeCredentials = Readonly<{
  username: string;
  password: string;
  /** The node's own LiveKit key (worker and GPU nodes); `null` for media nodes, which keep the cluster's. */
  livekit: LivekitCredentials | null;
}>;

/**
 * Each joined node's own Redis ACL user and, for worker and GPU nodes, LiveKit key (docs/adr/0025). Postgres holds the users (the password's
 * SHA-256 and the role); Redis holds them only as long as it runs, so the API re-creates them (and the
 * LiveKit keys) at boot and whenever its connection comes back (a restarted or replaced Redis), and deletes node
 * users Postgres no longer has: a former primary promoted again still holds users revoked while it
 * was a replica, since Redis does not replicate ACLs (docs/adr/0040-redis-sentinel.md). Each replica
 * holds the same users (written with the primary's, and every 15 s), so a replica promoted in a
 * failover lets every node in at once.
 */
@Injectable()
export class NodeCredentialsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger(NodeCredentialsService.name);
  private replicaSync: NodeJS.Timeout | undefined;
  /** Issues, revocations and applies run one at a time, so an apply never re-creates a user revoked meanwhile. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repository: NodeCredentialsRepository,
    private readonly acl: RedisAcl,
    private readonly livekitKeys: NodeLivekitKeys,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.acl.onReady(
      () => void this.applyAll().catch((error: unknown) => this.log.error(`could not re-create node users: ${String(error)}`)),
    );
    await this.applyAll();
    this.replicaSync = setInterval(
      () => void this.applyToReplicas().catch((error: unknown) => this.log.warn(`node users on replicas: ${String(error)}`)),
      REPLICA_SYNC_INTERVAL_MS,
    );
    this.replicaSync.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.replicaSync);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** A new password and LiveKit key for the node (replacing any earlier ones); returned once. */
  issue(nodeId: string, role: JoinedNodeRole): Promise<NodeCredentials> {
    return this.serially(() => this.issueNow(nodeId, role));
  }

  private async issueNow(nodeId: string, role: JoinedNodeRole): Promise<NodeCredentials> {
    const password = randomBytes(32).toString('base64url');
    const hash = sha256Hex(password);
    await this.repository.save(nodeId, role, hash);
    await this.acl.setUser(nodeAclSetUser(nodeId, role, hash));
    await this.onReplicas('wrote the user of a joined node', (replica) => replica.setUser(nodeAclSetUser(nodeId, role, hash)));
    let livekit: LivekitCredentials | null = null;
    if (holdsOwnLivekitKey(role)) livekit = await this.livekitKeys.put(nodeId, hash);
    else await this.livekitKeys.remove(nodeId);
    return { username: nodeRedisUser(nodeId), password, livekit };
  }

  /**
   * Re-creates every node's user from Postgres and deletes the node users that have no row, on the
   * primary and then on every replica; returns how many were applied. Redis is asked for its users
   * and keys before Postgres for its rows, so a node joining meanwhile (row first, then user) is
   * never taken for a revoked one.
   */
  applyAll(): Promise<number> {
    return this.serially(() => this.applyAllNow());
  }

  private async applyAllNow(): Promise<number> {
    const presentKeys = await this.livekitKeys.nodeIds();
    const { applied, revoked } = await this.applyTo(this.acl);
    if (revoked.length > 0) this.log.log(`deleted ${revoked.length} node user(s) that were revoked: ${revoked.join(', ')}`);
    const keptKeys = new Set<string>();
    for (const node of applied.filter(({ role }) => holdsOwnLivekitKey(role))) {
      await this.livekitKeys.put(node.nodeId, node.passwordSha256);
      keptKeys.add(node.nodeId);
    }
    for (const nodeId of presentKeys.filter((id) => !keptKeys.has(id))) await this.livekitKeys.remove(nodeId);
    await this.applyToReplicasNow();
    return applied.length;
  }

  /** Every replica's node users made those of Postgres, as on the primary. */
  applyToReplicas(): Promise<void> {
    return this.serially(() => this.applyToReplicasNow());
  }

  private async applyToReplicasNow(): Promise<void> {
    await this.onReplicas('applied the node users', async (replica) => void (await this.applyTo(replica)));
  }

  /** One server's node users made those of Postgres (its users read before the rows). */
  private async applyTo(server: AclServer): Promise<{ applied: AppliedNode[]; revoked: string[] }> {
    const present = (await server.users()).filter(isNodeRedisUser);
    const applied: AppliedNode[] = [];
    for (const row of await this.repository.all()) {
      const role = JoinedNodeRole.safeParse(row.role);
      if (!role.success) continue;
      await server.setUser(nodeAclSetUser(row.nodeId, role.data, row.redisPasswordSha256));
      applied.push({ nodeId: row.nodeId, role: role.data, passwordSha256: row.redisPasswordSha256 });
    }
    const kept = new Set(applied.map(({ nodeId }) => nodeRedisUser(nodeId)));
    const revoked = present.filter((user) => !kept.has(user));
    for (const user of revoked) await server.deleteUser(user);
    return { applied, revoked };
  }

  /** `apply` on every replica; one that could not be reached or refused is logged, and the next sync (15 s) tries again. */
  private async onReplicas(what: string, apply: (replica: AclServer) => Promise<void>): Promise<void> {
    const failed = await this.acl.onEachReplica(apply);
    if (failed.length > 0) this.log.warn(`${what} on ${failed.length} replica(s) not reached: ${failed.join('; ')}`);
  }

  /**
   * The server's users other than joined nodes' (the API's, the origin's media user, the replication
   * and Sentinel users) as redis.conf lines: what a new replica must have, since Redis does not
   * replicate ACLs, for the origin's processes to sign in once it is promoted.
   */
  async serverUsers(): Promise<string[]> {
    return (await this.acl.list()).filter((line) => !isNodeRedisUser(line.split(' ')[1] ?? ''));
  }

  /** Whether `secret` is the node's current password (its credential towards the API too). */
  async verify(nodeId: string, secret: string): Promise<boolean> {
    const row = await this.repository.get(nodeId);
    if (!row) return false;
    const given = Buffer.from(sha256Hex(secret), 'hex');
    const stored = Buffer.from(row.redisPasswordSha256, 'hex');
    return given.length === stored.length && timingSafeEqual(given, stored);
  }

  /** Whether the node holds credentials (joined and not removed). */
  async holds(nodeId: string): Promise<boolean> {
    return (await this.repository.get(nodeId)) !== null;
  }

  /**
   * Deletes the node's user at once (its open connections are closed and its password stops working)
   * and its LiveKit key (refused by every livekit-server within 3 s).
   */
  revoke(nodeId: string): Promise<void> {
    return this.serially(() => this.revokeNow(nodeId));
  }

  private async revokeNow(nodeId: string): Promise<void> {
    await this.repository.remove(nodeId);
    await this.acl.deleteUser(nodeRedisUser(nodeId));
    await this.onReplicas('deleted the user of a removed node', (replica) => replica.deleteUser(nodeRedisUser(nodeId)));
    await this.livekitKeys.remove(nodeId);
  }
}
