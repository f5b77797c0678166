import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Size of every regular file under `dir` (egress writes into its `.incoming/` first), by path relative to `dir`. */
export function treeFiles(dir: string): Map<string, number> {
  const files = new Map<string, number>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    try {
      files.set(relative(dir, path), statSync(path).size);
    } catch {
      // A file finalised and moved away while the tree was walked.
    }
  }
  return files;
}

/** One file's growth over the window, so a reader can see which outputs the rate is made of. */
export type FileGrowth = Readonly<{ path: string; bytes: number }>;

export type WriteRate = Readonly<{ bytesPerS: number; files: readonly FileGrowth[] }>;

/** Bytes per second one of `count` writers added under `dir` over `windowMs`: the growth of their files. */
export async function writeRate(dir: string, windowMs: number, count: number): Promise<WriteRate> {
  const before = treeFiles(dir);
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const after = treeFiles(dir);
  let grown = 0;
  const files: FileGrowth[] = [];
  for (const [path, size] of after) {
    const bytes = size - (before.get(path) ?? 0);
    grown += bytes;
    if (bytes !== 0) files.push({ path, bytes });
  }
  for (const [path, size] of before) if (!after.has(path)) grown -= size;
  return { bytesPerS: Math.max(0, grown) / (windowMs / 1000) / Math.max(1, count), files };
}
