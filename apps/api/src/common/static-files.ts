import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * @fastify/static without routes of its own: it only adds `reply.sendFile`, which every file this
 * API serves goes through (ranges, ETag / Last-Modified, 304, 416, HEAD). Each route decides what
 * may be served and how long caches keep it.
 */
export async function registerStaticFiles(fastify: FastifyInstance): Promise<void> {
  await fastify.register(fastifyStatic, { serve: false, dotfiles: 'deny', cacheControl: false });
}

export type StaticFileHeaders = Readonly<{ 'cache-control': string; 'content-type'?: string } & Record<string, string>>;

/**
 * Sends `file` below `root` with the route's own headers. Without `content-type`, the type comes
 * from the file name (with a charset for text).
 */
export async function sendStaticFile(reply: FastifyReply, root: string, file: string, headers: StaticFileHeaders): Promise<void> {
  await reply.headers(headers).sendFile(file, root, { cacheControl: false, contentType: headers['content-type'] === undefined });
}

/** Whether `file` below `root` exists as a regular file (so a route answers its own 404, not the router's). */
export async function isFile(root: string, file: string): Promise<boolean> {
  return stat(join(root, file)).then(
    (s) => s.isFile(),
    () => false,
  );
}
