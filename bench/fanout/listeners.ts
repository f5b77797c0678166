import { type ChildProcess, spawn } from 'node:child_process';

/** `curl` listeners reading a never-ending HTTP response into /dev/null, as in Icecast's listener test. */
export class CurlListeners {
  private readonly children: ChildProcess[] = [];

  get count(): number {
    return this.children.length;
  }

  growTo(n: number, url: string): void {
    while (this.children.length < n) {
      this.children.push(spawn('curl', ['-s', '-N', '-o', '/dev/null', url], { stdio: 'ignore' }));
    }
  }

  async stopAll(): Promise<void> {
    const exits = this.children.map(
      (c) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once('exit', () => resolve()))),
    );
    for (const c of this.children) c.kill('SIGTERM');
    await Promise.all(exits);
    this.children.length = 0;
  }
}
