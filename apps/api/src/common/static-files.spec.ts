import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerStaticFiles, sendStaticFile } from './static-files.js';

describe(sendStaticFile.name, () => {
  let sut: FastifyInstance;
  let root: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'tally-static-'));
    writeFileSync(join(root, 'seg1.m4s'), Buffer.from('0123456789'));
    writeFileSync(join(root, 'page.html'), '<!doctype html>');
    sut = Fastify();
    await registerStaticFiles(sut);
    sut.get('/typed/:file', (request, reply) =>
      sendStaticFile(reply, root, (request.params as { file: string }).file, {
        'content-type': 'video/mp4',
        'cache-control': 'public, max-age=31536000, immutable',
      }),
    );
    sut.get('/guessed/:file', (request, reply) =>
      sendStaticFile(reply, root, (request.params as { file: string }).file, { 'cache-control': 'no-cache' }),
    );
  });
  afterAll(async () => {
    await sut.close();
    rmSync(root, { recursive: true, force: true });
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
});
