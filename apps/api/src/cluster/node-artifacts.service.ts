import { Injectable } from '@nestjs/common';
import { NodeArtifacts } from '@tally/contracts';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import type { StaticFileHeaders } from '../common/static-files.js';
import { JoinTokenStore } from './join-tokens.store.js';
import { NodeArtifactsStore } from './node-artifacts.store.js';

export type ArtifactFile = Readonly<{ root: string; file: string; headers: StaticFileHeaders }>;

const BEARER_JOIN_TOKEN = /^Bearer (tjt_[A-Za-z0-9_-]{1,200})$/;

/**
 * The origin's built files for nodes that join it (docs/adr/0031-joins-take-the-origins-builds.md),
 * to anyone holding a join token that is still valid: the node fetches them before it spends the
 * token on the join itself.
 */
@Injectable()
export class NodeArtifactsService {
  constructor(
    private readonly tokens: JoinTokenStore,
    private readonly store: NodeArtifactsStore,
  ) {}

  async manifest(authorization: string | undefined): Promise<NodeArtifacts> {
    await this.authorize(authorization);
    return this.readManifest();
  }

  /** A file listed in the manifest; sent only if it is a regular file in the artifacts directory (sendStaticFile). */
  async file(authorization: string | undefined, name: string): Promise<ArtifactFile> {
    await this.authorize(authorization);
    const entry = (await this.readManifest()).files.find((file) => file.name === name);
    if (!entry) throw new NotFoundError('artifact');
    return {
      root: this.store.dir,
      file: entry.name,
      headers: { 'content-type': 'application/octet-stream', 'cache-control': 'no-store', 'x-tally-sha256': entry.sha256 },
    };
  }

  private async authorize(authorization: string | undefined): Promise<void> {
    const token = BEARER_JOIN_TOKEN.exec(authorization ?? '')?.[1];
    if (token === undefined || !(await this.tokens.isValid(token))) {
      throw new DomainError('unauthorized', 'a join token that is neither spent nor expired is required (Authorization: Bearer tjt_…)');
    }
  }

  private async readManifest(): Promise<NodeArtifacts> {
    const parsed = NodeArtifacts.safeParse(await this.store.readManifest());
    if (!parsed.success) throw new NotFoundError('artifact manifest (this origin offers no built files: nodes build their own)');
    return parsed.data;
  }
}
