import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '@tally/config';
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamUnavailableError } from '../common/domain-error.js';
import { ObjectStoreKeys } from './object-store-keys.js';

const withSocket = (socket: string | undefined) => new ObjectStoreKeys({ cluster: { objectStoreKeysSocket: socket } } as unknown as Config);

describe(ObjectStoreKeys.name, () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A broker on a unix socket that answers every request with `status` and `body`. */
  const broker = async (status: number, body: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-keys-'));
    dirs.push(dir);
    const socket = join(dir, 'keys.sock');
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(status).end(body);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    return socket;
  };

  it('is off without a socket: revoking does nothing', async () => {
    const sut = withSocket(undefined);
    expect(sut.enabled).toBe(false);
    await expect(sut.revoke('n1')).resolves.toBeUndefined();
  });

  it('returns the key the broker made', async () => {
    const sut = withSocket(await broker(200, JSON.stringify({ accessKeyId: 'tally-node-n1', secretAccessKey: 's3cret' })));
    await expect(sut.issue('n1')).resolves.toEqual({ accessKeyId: 'tally-node-n1', secretAccessKey: 's3cret' });
  });

  it('a broker that cannot be reached or refuses is a 503 naming it, never a 500', async () => {
    const refusing = [
      withSocket('/nonexistent/keys.sock'),
      withSocket(await broker(502, '{"error":"the object store refused"}')),
      withSocket(await broker(200, 'not json')),
    ];
    for (const sut of refusing) {
      await expect(sut.issue('n1')).rejects.toBeInstanceOf(UpstreamUnavailableError);
      await expect(sut.revoke('n1')).rejects.toMatchObject({
        code: 'upstream_unavailable',
        details: { service: 'object store key broker' },
      });
    }
  });
});
