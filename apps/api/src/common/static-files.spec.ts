import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from './domain-error.js';
import { isFile, registerStaticFiles, sendStaticFile } from './static-files.js';

describe(sendStaticFile.name, () => {
  let sut: FastifyInstance;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    const base = mkdtempSync(join(tmpdir(), 'tally-static-'));
    root = join(base, 'served');
    outside = join(base, 'secrets');
    mkdirSync(join(root, 'sub'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, 'admin.key'), 'the-admin-key');
    writeFileSync(join(root, 'seg1.m4s'), Buffer.from('0123456789'));
    writeFileSync(join(root, 'sub', 'seg2.m4s'), Buffer.from('abc'));
    writeFileSync(join(root, 'page.html'), '<!doctype html>');
    symlinkSync(join(outside, 'admin.key'), join(root, 'linked.m4s'));
    symlinkSync('seg1.m4s', join(root, 'relative-link.m4s'));
    symlinkSync(outside, join(root, 'linked-dir'));
    execFileSync('mkfifo', [join(root, 'fifo.m4s')]);
    sut = Fastify();
    sut.setErrorHandler((error, _request, reply) => {
      if (!(error instanceof DomainError)) throw error; // Fastify's own answer (416 with its Content-Range)
      return reply.status(404).send(error.message);
    });
    await registerStaticFiles(sut);
    sut.get('/typed/:file', (request, reply) =>
      sendStaticFile(reply, root, (request.params as { file: string }).file, {
        'content-type': 'video/mp4',
        'cache-control': 'public, max-age=31536000, immutable',
      }),
    );
    sut.get('/nested/*', (request, reply) =>
      sendStaticFile(reply, root, (request.params as { '*': string })['*'], { 'cache-control': 'no-cache', 'content-type': 'video/mp4' }),
    );
    sut.get('/guessed/:file', (request, reply) =>
      sendStaticFile(reply, root, (request.params as { file: string }).file, { 'cache-control': 'no-cache' }),
    );
  });
  afterAll(async () => {
    await sut.close();
    rmSync(join(root, '..'), { recursive: true, force: true });
  });

  it('sends the file with the route’s type and caching, and a validator for revalidation', async () => {
    const whole = await sut.inject({ url: '/typed/seg1.m4s' });

    expect(whole.statusCode).toBe(200);
    expect(whole.body).toBe('0123456789');
    expect(whole.headers).toMatchObject({
      'content-type': 'video/mp4',
      'cache-control': 'public, max-age=31536000, immutable',
      'content-length': '10',
      'accept-ranges': 'bytes',
    });
    const again = await sut.inject({ url: '/typed/seg1.m4s', headers: { 'if-none-match': String(whole.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('answers byte ranges (what players seek with) and refuses ranges past the end', async () => {
    const part = await sut.inject({ url: '/typed/seg1.m4s', headers: { range: 'bytes=2-5' } });
    const suffix = await sut.inject({ url: '/typed/seg1.m4s', headers: { range: 'bytes=-3' } });
    const past = await sut.inject({ url: '/typed/seg1.m4s', headers: { range: 'bytes=10-' } });

    expect([part.statusCode, part.body, part.headers['content-range']]).toEqual([206, '2345', 'bytes 2-5/10']);
    expect([suffix.statusCode, suffix.body]).toEqual([206, '789']);
    expect([past.statusCode, past.headers['content-range']]).toEqual([416, 'bytes */10']);
  });

  it('names the type from the file when the route does not', async () => {
    const page = await sut.inject({ url: '/guessed/page.html' });

    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
  });

  it('serves a regular file in a subdirectory', async () => {
    const nested = await sut.inject({ url: '/nested/sub/seg2.m4s' });

    expect([nested.statusCode, nested.body]).toEqual([200, 'abc']);
  });

  it('answers 404 for a symlink, whether it points out of the directory or inside it', async () => {
    for (const url of ['/typed/linked.m4s', '/typed/relative-link.m4s', '/nested/linked-dir/admin.key']) {
      const answer = await sut.inject({ url });
      expect([url, answer.statusCode]).toEqual([url, 404]);
      expect(answer.body).not.toContain('the-admin-key');
    }
    expect(await isFile(root, 'linked.m4s')).toBe(false);
    expect(await isFile(root, 'linked-dir/admin.key')).toBe(false);
  });

  it('answers 404 for a FIFO at once (no read waiting for a writer) and for names leaving the directory', async () => {
    expect((await sut.inject({ url: '/typed/fifo.m4s' })).statusCode).toBe(404);
    expect((await sut.inject({ url: '/nested/sub/../../secrets/admin.key' })).statusCode).toBe(404);
    expect(await isFile(root, '../secrets/admin.key')).toBe(false);
    expect(await isFile(root, join(outside, 'admin.key'))).toBe(false);
    expect(await isFile(root, 'sub')).toBe(false);
  });
});
