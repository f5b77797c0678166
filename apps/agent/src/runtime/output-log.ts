import { appendFileSync } from 'node:fs';

/** A worker's recent output lines, kept in a ring and appended to its log file, with listeners for new ones. */
export class OutputLog {
  private readonly lines: string[] = [];
  private readonly listeners: Array<(line: string) => void> = [];

  constructor(
    private readonly file: string | undefined,
    private readonly keep = 500,
  ) {}

  push(line: string): void {
    if (this.file !== undefined) {
      try {
        appendFileSync(this.file, `${line}\n`);
      } catch {
        // A full disk must not take the worker's supervision down with it.
      }
    }
    this.lines.push(line);
    if (this.lines.length > this.keep) this.lines.shift();
    for (const listener of this.listeners) listener(line);
  }

  /** Replays what is kept, then every new line. */
  subscribe(listener: (line: string) => void): void {
    for (const line of this.lines) listener(line);
    this.listeners.push(listener);
  }

  tail(count: number): string[] {
    return this.lines.slice(-count);
  }
}
