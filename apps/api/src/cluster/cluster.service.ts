import { Inject, Injectable } from '@nestjs/common';
import type { ClusterSettings, CreateJoinTokenBody, JoinNodeBody, JoinTokenView } from '@tally/contracts';
import { CONFIG, type Config } from '@tally/config';
import { NodeRegistry } from '@tally/nodes';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { JoinTokenStore } from './join-tokens.store.js';
import { NodeCredentialsService } from './node-credentials.service.js';
import { ObjectStoreKeys } from './object-store-keys.js';
import { sentinelAddresses } from './sentinel-addresses.js';
import { SentinelDirectory } from './sentinel-directory.js';

/** Hands a new node the cluster's settings, with Redis credentials (and a LiveKit key) of its own, in exchange for a one-time token an admin issued. */
@Injectable()
export class ClusterService {
  constructor(
    private readonly tokens: JoinTokenStore,
    private readonly registry: NodeRegistry,
    private readonly credentials: NodeCredentialsService,
    private readonly objectStoreKeys: ObjectStoreKeys,
    private readonly clock: Clock,
    private readonly sentinels: SentinelDirectory,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async issueToken(body: CreateJoinTokenBody): Promise<JoinTokenView> {
    this.clusterRedisUrl();
    const redisReplica = body.redisReplica ?? false;
    if (redisReplica) this.replicaSecrets();
    if (body.role === 'control') this.clusterDatabaseUrl();
    const ttlS = body.ttlS ?? this.config.cluster.joinTokenTtlS;
    const role = body.role ?? 'media';
    const token = await this.tokens.issue({ role, name: body.name, redisReplica }, ttlS);
    return {
      token,
      expiresAt: new Date(this.clock.now().getTime() + ttlS * 1000).toISOString(),
      command: `./install.sh --join ${this.config.http.publicUrl} --token ${token} --role ${role} --name ${body.name}${redisReplica ? ' --redis-replica' : ''}`,
    };
  }

  /**
   * The token is checked first, against the role and name it was made for, so a caller without the
   * right token learns nothing about which names are in the pool.
   */
  async join(body: JoinNodeBody): Promise<ClusterSettings> {
    const clusterUrl = this.clusterRedisUrl();
    const refused = () => new DomainError('unauthorized', 'join token unknown, expired, already used, or made for another node');
    const binding = await this.tokens.peek(body.token);
    if (!binding || binding.role !== body.role || binding.name !== body.name || binding.redisReplica !== (body.redisReplica ?? false))
      throw refused();
    if (await this.registry.get(body.name))
      throw new DomainError('conflict', `a node named ${body.name} is already in the pool`, { field: 'name' });
    if (!(await this.tokens.take(body.token))) throw refused();
    const { username, password, livekit } = await this.credentials.issue(body.name, body.role);
    const redisUrl = new URL(clusterUrl);
    redisUrl.username = encodeURIComponent(username);
    redisUrl.password = encodeURIComponent(password);
    // Worker and GPU nodes sign with their own key; a media node's livekit-server holds the cluster's.
    const { apiKey, apiSecret } = livekit ?? this.config.livekit;
    const wsUrl = this.config.livekit.publicUrl;
    return {
      nodeId: body.name,
      role: body.role,
      redisUrl: redisUrl.toString(),
      livekit: { apiKey, apiSecret, wsUrl, webhookUrl: new URL('/webhooks/livekit', this.config.http.publicUrl).toString() },
      recordingsDir: this.config.recordings.dir,
      objectStore: body.role === 'media' ? null : await this.objectStore(body.name, body.role === 'control'),
      redisSentinel: await this.sentinelSettings(),
      redisReplica: binding.redisReplica ? await this.replicaSettings(clusterUrl) : null,
      turn: body.role === 'media' ? this.turnServer() : null,
      control: body.role === 'control' ? this.controlPlane() : null,
    };
  }

  /** What a control node's API and worker run with besides Redis and LiveKit (docs/adr/0043-control-plane-replicas.md). */
  private controlPlane(): ClusterSettings['control'] {
    return {
      databaseUrl: this.clusterDatabaseUrl(),
      secretsKey: this.config.secretsKey?.toString('hex') ?? null,
      adminKey: this.config.adminKey ?? null,
      metricsToken: this.config.metricsToken ?? null,
      publicUrl: this.config.http.publicUrl,
      hlsDir: this.config.hls.dir,
      webhookAllowCidrs: [...this.config.webhooks.allowCidrs],
    };
  }

  private clusterDatabaseUrl(): string {
    const url = this.config.cluster.databaseUrl;
    if (url === undefined) {
      throw new DomainError(
        'conflict',
        "this origin's PostgreSQL is not open to control nodes: re-run install.sh on it with --control-nodes IP (TALLY_CLUSTER_DATABASE_URL)",
        { field: 'role' },
      );
    }
    return url;
  }

  /** The origin's Sentinels, then the others they know of (those of replica nodes joined before). */
  private async sentinelSettings(): Promise<ClusterSettings['redisSentinel']> {
    const configured = this.config.cluster.sentinels;
    if (configured === undefined) return null;
    return {
      name: this.config.redis.sentinel?.name ?? 'tally',
      addresses: sentinelAddresses(configured, await this.sentinels.discovered()),
    };
  }

  /** The replication settings of a --redis-replica node (docs/adr/0040-redis-sentinel.md). */
  private async replicaSettings(clusterUrl: string): Promise<ClusterSettings['redisReplica']> {
    const { replicationPassword, sentinelPassword } = this.replicaSecrets();
    const url = new URL(clusterUrl);
    return {
      primary: `${url.hostname}:${url.port || '6379'}`,
      quorum: 2,
      replicationUser: 'tally-replication',
      replicationPassword,
      sentinelUser: 'tally-sentinel',
      sentinelPassword,
      serverUsers: await this.credentials.serverUsers(),
    };
  }

  private replicaSecrets(): { replicationPassword: string; sentinelPassword: string } {
    const { sentinels, replicationPassword, sentinelPassword } = this.config.cluster;
    if (sentinels === undefined || replicationPassword === undefined || sentinelPassword === undefined) {
      throw new DomainError(
        'conflict',
        'this origin runs Redis without Sentinel: re-run install.sh on it with --redis-sentinel (TALLY_CLUSTER_REDIS_SENTINELS)',
        { field: 'redisReplica' },
      );
    }
    return { replicationPassword, sentinelPassword };
  }

  /**
   * With object storage on, a node that records stages its files in the bucket (docs/adr/0033), reached
   * at the cluster's endpoint, with a key of its own when the bundled store's key broker runs
   * (docs/adr/0045), else the origin's key.
   */
  private async objectStore(nodeId: string, originKey: boolean): Promise<ClusterSettings['objectStore']> {
    const s3 = this.config.recordings.s3;
    if (!s3) return null;
    const endpoint = this.config.cluster.s3Endpoint ?? s3.endpoint;
    // A control node's worker uploads, moves and deletes recordings as the origin's does: the origin's key.
    const key =
      this.objectStoreKeys.enabled && !originKey
        ? await this.objectStoreKeys.issue(nodeId)
        : { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey };
    return {
      ...(endpoint === undefined ? {} : { endpoint }),
      bucket: s3.bucket,
      region: s3.region,
      forcePathStyle: s3.forcePathStyle,
      ...key,
    };
  }

  /** The origin's coturn: a room LiveKit places on a joined media node keeps TURN over TLS (docs/adr/0042). */
  private turnServer(): ClusterSettings['turn'] {
    const turn = this.config.cluster.turn;
    return turn === undefined ? null : { host: turn.host, port: turn.port, secret: turn.secret };
  }

  private clusterRedisUrl(): string {
    const url = this.config.cluster.redisUrl;
    if (url === undefined) {
      throw new DomainError('conflict', 'this origin accepts no nodes: set TALLY_CLUSTER_REDIS_URL (install.sh --cluster-bind IP)');
    }
    return url;
  }
}
