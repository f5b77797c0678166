import { randomBytes } from 'node:crypto';
import { open, readdir, rename, stat, statfs, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Injectable } from '@nestjs/common';

export type FilesystemStats = Readonly<{ device: number; totalBytes: number; freeBytes: number }>;

const CHUNK = Buffer.alloc(1024 * 1024);

/** The adapter in front of the filesystem calls the disk watermark check makes. */
@Injectable()
export class DiskStats {
  /** The filesystem holding `dir`; undefined when the directory does not exist (nothing writes there yet). */
  async filesystem(dir: string): Promise<FilesystemStats | undefined> {
    try {
      const [fs, info] = await Promise.all([statfs(dir), stat(dir)]);
      // bavail: what a writer that is not root (egress, the worker) may still use.
      return { device: info.dev, totalBytes: fs.blocks * fs.bsize, freeBytes: fs.bavail * fs.bsize };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** The size of a file, 0 when it is not there (not yet written, or already joined and removed). */
  async size(path: string): Promise<number> {
    return stat(path).then(
      (s) => (s.isFile() ? s.size : 0),
      () => 0,
    );
  }

  /**
   * Writes a file of `bytes` zeros, synced: unlike a sparse file or tmpfs's fallocate, written blocks
   * are really taken from the filesystem, so deleting them later really gives that room back. Each
   * writer has a partial file of its own (workers on several nodes may share the directory), renamed
   * into place once complete; one removed meanwhile by a release (the disk filled) is not put back.
   */
  async writeReserve(path: string, bytes: number): Promise<void> {
    const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
    const file = await open(partial, 'w', 0o600);
    try {
      for (let written = 0; written < bytes;) {
        const { bytesWritten } = await file.write(CHUNK, 0, Math.min(CHUNK.length, bytes - written));
        written += bytesWritten;
      }
      await file.sync();
    } catch (error) {
      await file.close();
      await unlink(partial).catch(() => undefined);
      throw error;
    }
    await file.close();
    await rename(partial, path).catch(ignoreMissing);
  }

  /** Removes the file and every partial copy of it still being written. */
  async remove(path: string): Promise<void> {
    await unlink(path).catch(ignoreMissing);
    const prefix = `${basename(path)}.`;
    const names = await readdir(dirname(path)).catch(() => [] as string[]);
    for (const name of names) {
      if (name.startsWith(prefix) && name.endsWith('.partial')) await unlink(join(dirname(path), name)).catch(ignoreMissing);
    }
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
