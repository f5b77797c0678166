/** A worker's recent output lines, kept in a ring, with listeners for new ones. */
export class OutputLog {
  private readonly lines: string[] = [];
  private readonly listeners: Array<(line: string) => void> = [];

  constructor(private readonly keep = 500) {}

  push(line: string): void {
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
