/** Progress goes to stderr so that stdout carries only the Markdown result. */
export function progress(bench: string, message: string): void {
  process.stderr.write(`[bench:${bench}] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
}
