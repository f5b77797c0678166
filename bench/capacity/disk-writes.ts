import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Bytes held by the regular files under `dir` (egress writes into its `.incoming/` first). */
export function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      total += statSync(join(entry.parentPath, entry.name)).size;
    } catch {
      // A file finalised and moved away while the tree was walked.
    }
  }
  return total;
}

/** Bytes per second one of `count` writers added under `dir` over `windowMs`: the growth of their files. */
export async function writeRate(dir: string, windowMs: number, count: number): Promise<number> {
  const before = treeBytes(dir);
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const after = treeBytes(dir);
  return Math.max(0, after - before) / (windowMs / 1000) / Math.max(1, count);
}
