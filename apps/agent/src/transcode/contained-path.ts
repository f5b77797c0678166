import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** A job asked for a path outside the directory it may touch. */
export class PathEscapeError extends Error {
  constructor(field: string, value: string, root: string) {
    super(`${field} ${JSON.stringify(value)} is not a path inside ${root}`);
    this.name = 'PathEscapeError';
  }
}

function strictlyInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** The real path of `path`'s deepest existing ancestor, and whether that is `path` itself. */
async function realAncestor(path: string): Promise<{ real: string; exact: boolean }> {
  let current = path;
  for (;;) {
    try {
      return { real: await realpath(current), exact: current === path };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const parent = dirname(current);
      if (parent === current) return { real: current, exact: false };
      current = parent;
    }
  }
}

/**
 * Resolves `value` (a path relative to `root`, taken from a queued job) to an absolute path
 * strictly inside `root`. Refuses absolute paths, `..` escapes, `root` itself, and paths whose
 * existing part leads out of `root` through a symlink: whoever can queue a job (anyone holding the
 * cluster's Redis password) must not make this node read, overwrite or delete anything else.
 * `followLast: false` is for paths that are removed or replaced: a symlink there is removed
 * itself (rm never follows it), so only its parent directory has to stay inside.
 */
export async function containedPath(root: string, value: string, field: string, options: { followLast?: boolean } = {}): Promise<string> {
  const base = resolve(root);
  if (value === '' || isAbsolute(value) || value.includes('\0')) throw new PathEscapeError(field, value, base);
  const path = resolve(base, value);
  if (!strictlyInside(base, path)) throw new PathEscapeError(field, value, base);
  const realBase = await realpath(base);
  const checked = options.followLast === false ? dirname(path) : path;
  const { real, exact } = await realAncestor(checked);
  // The directory a removed or replaced path sits in may be the root itself; a path that is read
  // or written (and exists) must lead strictly inside it.
  const rootAllowed = options.followLast === false || !exact;
  if (!(strictlyInside(realBase, real) || (rootAllowed && real === realBase))) throw new PathEscapeError(field, value, base);
  return path;
}
