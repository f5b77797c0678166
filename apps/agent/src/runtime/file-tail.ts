import { closeSync, openSync, readSync } from 'node:fs';

export type FileTail = Readonly<{ stop(): void }>;

const POLL_MS = 200;

/**
 * Follows lines appended to `path` from byte `offset` on. Workers write their output straight into
 * their log file rather than into a pipe to the agent, so they outlive an agent that exits (a pipe
 * would break and end them) and a new agent reads them the same way.
 */
export function followFile(path: string, offset: number, onLine: (line: string) => void): FileTail {
  let position = offset;
  let partial = '';
  const buffer = Buffer.alloc(64 * 1024);
  const read = () => {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return;
    }
    try {
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, position);
        if (n <= 0) break;
        position += n;
        const lines = (partial + buffer.subarray(0, n).toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) onLine(line);
      }
    } finally {
      closeSync(fd);
    }
  };
  const timer = setInterval(read, POLL_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      read();
      if (partial !== '') onLine(partial);
      partial = '';
    },
  };
}
