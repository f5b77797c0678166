import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterSettings, JoinTokenView, NodeArtifacts } from '@tally/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from './api-harness.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The built files an origin offers joining nodes (GET /v1/nodes/artifacts), behind a join token. */
describe('GET /v1/nodes/artifacts', () => {
  let sut: ApiHarness;
  let home: string;
  const binary = randomBytes(6 * 1024 * 1024);
  const secret = 'the origin admin key, never served';
  const manifest: NodeArtifacts = {
    platform: 'linux-amd64',
    files: [
      {
        name: 'livekit-server',
        kind: 'binary',
        version: 'livekit-server v1.13.5 recipe=0123456789abcdef.2',
        sha256: sha256(binary),
        bytes: binary.length,
      },
      { name: 'egress', kind: 'binary', version: 'egress v1.8.6 recipe=x', sha256: '0'.repeat(64), bytes: secret.length },
    ],
  };

  const nodeName = `n-${randomBytes(3).toString('hex')}`;
  const newToken = async () => {
    const created = await sut.admin.post<JoinTokenView>('/v1/nodes/join-tokens', { name: nodeName, role: 'worker' });
    expect(created.status).toBe(201);
    return created.body.token;
  };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'tally-artifacts-home-'));
    const dir = join(home, 'artifacts');
    mkdirSync(dir);
    writeFileSync(join(dir, 'livekit-server'), binary);
    writeFileSync(join(home, 'admin.key'), secret);
    // A name in the manifest that is a symlink out of the directory.
    symlinkSync(join(home, 'admin.key'), join(dir, 'egress'));
    writeFileSync(join(dir, 'unlisted'), 'not in the manifest');
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    sut = await startApiHarness({ TALLY_HOME: home, TALLY_CLUSTER_REDIS_URL: 'redis://:pw@10.0.0.5:6379' });
  }, 120_000);

  afterAll(async () => {
    await sut?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('answers 401 without a valid join token: none, an unknown one, or the admin key', async () => {
    expect((await sut.anonymous.get('/v1/nodes/artifacts')).status).toBe(401);
    expect((await sut.anonymous.withKey(`tjt_${randomBytes(32).toString('base64url')}`).get('/v1/nodes/artifacts')).status).toBe(401);
    expect((await sut.admin.get('/v1/nodes/artifacts')).status).toBe(401);
    expect((await sut.admin.get('/v1/nodes/artifacts/livekit-server')).status).toBe(401);
  });

  it('lists the manifest and streams a listed file whose sha256 matches it, without spending the token', async () => {
    const token = await newToken();
    const node = sut.anonymous.withKey(token);
    const listed = await node.get<NodeArtifacts>('/v1/nodes/artifacts');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual(manifest);

    const response = await node.raw('/v1/nodes/artifacts/livekit-server');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-tally-sha256')).toBe(manifest.files[0]!.sha256);
    const body = new Uint8Array(await response.arrayBuffer());
    expect(body.length).toBe(binary.length);
    expect(sha256(body)).toBe(manifest.files[0]!.sha256);

    // The node joins with the same token afterwards; then the token opens nothing more.
    const joined = await sut.anonymous.post<ClusterSettings>('/v1/nodes/join', { token, name: nodeName, role: 'worker' });
    expect(joined.status).toBe(200);
    expect((await node.get('/v1/nodes/artifacts')).status).toBe(401);
  });

  it('serves only regular files listed in the manifest: a symlinked or unlisted name is 404, a path is 400', async () => {
    const node = sut.anonymous.withKey(await newToken());
    const linked = await node.raw('/v1/nodes/artifacts/egress');
    expect(linked.status).toBe(404);
    expect(await linked.text()).not.toContain(secret);
    expect((await node.get('/v1/nodes/artifacts/unlisted')).status).toBe(404);
    const path = await node.get<{ error: { details?: unknown } }>('/v1/nodes/artifacts/..%2Fadmin.key');
    expect(path.status).toBe(400);
    expect(JSON.stringify(path.body)).toContain('name');
  });

  it('answers 404 when the origin has no manifest (its nodes build their own)', async () => {
    const node = sut.anonymous.withKey(await newToken());
    const file = join(home, 'artifacts', 'manifest.json');
    renameSync(file, `${file}.off`);
    try {
      expect((await node.get('/v1/nodes/artifacts')).status).toBe(404);
      expect((await node.get('/v1/nodes/artifacts/livekit-server')).status).toBe(404);
    } finally {
      renameSync(`${file}.off`, file);
    }
  });
});
