import { Inject, Injectable } from '@nestjs/common';
import type { ClusterSettings, CreateJoinTokenBody, JoinNodeBody, JoinTokenView } from '@tally/contracts';
import { CONFIG, type Config } from '@tally/config';
import { NodeRegistry } from '@tally/nodes';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { JoinTokenStore } from './join-tokens.store.js';

/** Hands a new node the cluster's settings in exchange for a one-time token an admin issued. */
@Injectable()
export class ClusterService {
  constructor(
    private readonly tokens: JoinTokenStore,
    private readonly registry: NodeRegistry,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async issueToken(body: CreateJoinTokenBody): Promise<JoinTokenView> {
    this.clusterRedisUrl();
    const ttlS = body.ttlS ?? this.config.cluster.joinTokenTtlS;
    const token = await this.tokens.issue(ttlS);
    return {
      token,
      expiresAt: new Date(this.clock.now().getTime() + ttlS * 1000).toISOString(),
      command: `./install.sh --join ${this.config.http.publicUrl} --token ${token} --role ${body.role ?? 'media'} --name ${body.name ?? 'NODE_NAME'}`,
    };
  }

  async join(body: JoinNodeBody): Promise<ClusterSettings> {
    const redisUrl = this.clusterRedisUrl();
    if (await this.registry.get(body.name))
      throw new DomainError('conflict', `a node named ${body.name} is already in the pool`, { field: 'name' });
    if (!(await this.tokens.take(body.token))) throw new DomainError('unauthorized', 'join token unknown, expired or already used');
    const { apiKey, apiSecret, publicUrl: wsUrl } = this.config.livekit;
    return {
      nodeId: body.name,
      role: body.role,
      redisUrl,
      livekit: { apiKey, apiSecret, wsUrl, webhookUrl: new URL('/webhooks/livekit', this.config.http.publicUrl).toString() },
    };
  }

  private clusterRedisUrl(): string {
    const url = this.config.cluster.redisUrl;
    if (url === undefined) {
      throw new DomainError('conflict', 'this origin accepts no nodes: set TALLY_CLUSTER_REDIS_URL (install.sh --cluster-bind IP)');
    }
    return url;
  }
}
