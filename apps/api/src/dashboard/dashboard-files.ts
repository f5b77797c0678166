import { extname, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Inject, Injectable } from '@nestjs/common';
import { isFile } from '../common/static-files.js';

/** Where `npm run build:dashboard` writes the dashboard (apps/dashboard/dist). */
export const DASHBOARD_DIR = Symbol('DASHBOARD_DIR');
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));

export type DashboardFile = Readonly<{ root: string; relative: string; cacheControl: string }>;

export type DashboardLookup =
  Readonly<{ kind: 'file'; file: DashboardFile }> | Readonly<{ kind: 'not_built' }> | Readonly<{ kind: 'not_found' }>;

/** Vite puts content-hashed names under assets/: they never change, so browsers may keep them. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html names the current hashed assets, so it is revalidated on every load. */
const REVALIDATE = 'no-cache';

/**
 * Which file of the dashboard's build answers a URL. Paths with no file extension fall back to
 * index.html (the single-page app routes them); a missing build is reported, not thrown.
 */
@Injectable()
export class DashboardFiles {
  constructor(@Inject(DASHBOARD_DIR) private readonly root: string) {}

  async lookup(urlPath: string): Promise<DashboardLookup> {
    const index = await this.file('index.html');
    if (!index) return { kind: 'not_built' };
    const relative = safeRelativePath(urlPath);
    if (relative === undefined) return { kind: 'not_found' };
    if (relative === '' || relative === 'index.html') return { kind: 'file', file: index };
    const file = await this.file(relative);
    if (file) return { kind: 'file', file };
    return extname(relative) === '' ? { kind: 'file', file: index } : { kind: 'not_found' };
  }

  private async file(relative: string): Promise<DashboardFile | undefined> {
    if (!(await isFile(this.root, relative))) return undefined;
    return { root: this.root, relative, cacheControl: relative.startsWith('assets/') ? IMMUTABLE : REVALIDATE };
  }
}

/**
 * The part of a `/dashboard/...` URL below the build directory, or undefined when it could
 * escape it (`..`, encoded slashes, NUL) or names a dotfile.
 */
export function safeRelativePath(urlPath: string): string | undefined {
  const pathname = urlPath.split(/[?#]/, 1)[0] ?? '';
  const below = pathname.replace(/^\/dashboard(?=\/|$)/, '');
  let decoded: string;
  try {
    decoded = decodeURIComponent(below);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  const segments = decoded.split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '..' || s.startsWith('.'))) return undefined;
  return posix.normalize(segments.join('/')).replace(/^\.$/, '');
}
