import { request } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { z } from 'zod';
import { UpstreamUnavailableError } from '../common/domain-error.js';

export type NodeObjectStoreKey = Readonly<{ accessKeyId: string; secretAccessKey: string }>;

const IssuedKey = z.object({ accessKeyId: z.string().min(1), secretAccessKey: z.string().min(1) });

/**
 * The bundled object store's key broker (scripts/install/object-store-keys.mjs, docs/adr/0045): it
 * holds the store's root key, which the API never does, and makes or deletes the account of one
 * joined node on request. Unset socket: nodes are handed the origin's key (an external bucket).
 */
@Injectable()
export class ObjectStoreKeys {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  get enabled(): boolean {
    return this.config.cluster.objectStoreKeysSocket !== undefined;
  }

  /** A new key of the node's own (replacing any earlier one), allowed to stage under `incoming/` only. */
  async issue(nodeId: string): Promise<NodeObjectStoreKey> {
    const { status, body } = await this.call('PUT', nodeId);
    const key = status === 200 ? IssuedKey.safeParse(parseJson(body)) : undefined;
    if (!key?.success) throw this.refused(`HTTP ${status}: ${body}`);
    return key.data;
  }

  /** Deletes the node's account: the store refuses its key from then on. No account: nothing to do. */
  async revoke(nodeId: string): Promise<void> {
    if (!this.enabled) return;
    const { status, body } = await this.call('DELETE', nodeId);
    if (status !== 204) throw this.refused(`HTTP ${status}: ${body}`);
  }

  /** A 503 naming the broker; what it answered goes to the log only. */
  private refused(why: string): UpstreamUnavailableError {
    return new UpstreamUnavailableError('object store key broker', new Error(why));
  }

  private call(method: 'PUT' | 'DELETE', nodeId: string): Promise<{ status: number; body: string }> {
    const socketPath = this.config.cluster.objectStoreKeysSocket;
    if (socketPath === undefined) return Promise.reject(new Error('TALLY_OBJECT_STORE_KEYS_SOCKET is not set'));
    return new Promise((resolve, reject) => {
      const req = request({ socketPath, method, path: `/nodes/${encodeURIComponent(nodeId)}`, timeout: 30_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
      req.on('error', (error) => reject(this.refused(`${socketPath}: ${error.message}`)));
      req.end();
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
