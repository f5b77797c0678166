import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, normalize } from 'node:path';
import send from '@fastify/send';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { NotFoundError } from './domain-error.js';

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
 * Where this process sees its own open files. @fastify/static is handed `/proc/self/fd/<fd>` of a
 * file opened and checked here: it stats and reads that inode, never the name again, so nothing
 * swapped in between the check and the read is served.
 */
const OWN_FDS = '/proc/self/fd';

// Not following a symlink in the last component, and not waiting on a FIFO's writer.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens `file` below `root` only if it is a regular file that really is there: no symlink on the
 * path below `root` (the media user and joined nodes write these directories), no FIFO, device or
 * socket. `root` itself may be reached through symlinks. Undefined otherwise.
 */
export async function openServable(root: string, file: string): Promise<FileHandle | undefined> {
  const relative = normalize(file);
  if (file.includes('\0') || isAbsolute(relative) || relative === '.' || relative.startsWith('..')) return undefined;
  let expected: string;
  try {
    expected = join(await realpath(root), relative);
    // Never opens a device or FIFO a name points to (opening some has side effects).
    if (!(await lstat(expected)).isFile()) return undefined;
  } catch {
    return undefined;
  }
  const handle = await open(expected, OPEN_FLAGS).catch(() => undefined);
  if (!handle) return undefined;
  try {
    // What was opened, checked on the descriptor: a regular file whose one path is the expected
    // one (a symlinked directory on the way would resolve elsewhere).
    const [stat, opened] = await Promise.all([handle.stat(), readlink(`${OWN_FDS}/${handle.fd}`)]);
    if (stat.isFile() && opened === expected) return handle;
  } catch {
    // treated as absent
  }
  await handle.close();
  return undefined;
}

/**
 * Sends `file` below `root` with the route's own headers, or throws not_found (naming `what`) when
 * it is not a regular file there (openServable). Without `content-type`, the type comes from the
 * file name (with a charset for text).
 */
export async function sendStaticFile(
  reply: FastifyReply,
  root: string,
  file: string,
  headers: StaticFileHeaders,
  what = 'file',
): Promise<void> {
  const handle = await openServable(root, file);
  if (!handle) throw new NotFoundError(what);
  // Closed once the response is over, whichever way it ends (sent, 304, aborted).
  reply.raw.once('close', () => void handle.close().catch(() => undefined));
  try {
    await reply.headers({ 'content-type': contentTypeOf(file), ...headers }).sendFile(String(handle.fd), OWN_FDS, {
      cacheControl: false,
      contentType: false,
    });
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** As @fastify/send types a file by its name: text types with a charset. */
function contentTypeOf(file: string): string {
  const type = send.mime.getType(file) ?? 'application/octet-stream';
  return send.isUtf8MimeType(type) ? `${type}; charset=utf-8` : type;
}

/** Whether `file` below `root` would be served (so a route answers its own 404, not a generic one). */
export async function isFile(root: string, file: string): Promise<boolean> {
  const handle = await openServable(root, file);
  await handle?.close();
  return handle !== undefined;
}
