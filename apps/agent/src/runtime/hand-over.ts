import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The file install.sh creates in the workers directory before it restarts the agent for an
 * upgrade: the agent that stops then leaves its workers running, and the next one adopts them.
 */
export function handOverFile(workersDir: string): string {
  return join(workersDir, 'hand-over');
}

export function handOverRequested(workersDir: string): boolean {
  return existsSync(handOverFile(workersDir));
}
