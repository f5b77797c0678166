// Preloaded into the bench's worker (--import) when TALLY_BENCH_WORKER_CPU_PROF names a directory:
// profiles the whole process with V8's sampler and writes <dir>/worker-<pid>.cpuprofile when the
// worker is stopped with SIGTERM (node --cpu-prof writes nothing when Nest re-raises the signal).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout } from 'node:timers';

const dir = process.env.TALLY_BENCH_WORKER_CPU_PROF;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable', () => session.post('Profiler.start'));
  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    // Give Nest's own shutdown (it re-raises the signal afterwards, to this handler) time to finish.
    setTimeout(() => {
      session.post('Profiler.stop', (error, result) => {
        if (!error) writeFileSync(join(dir, `worker-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
        process.exit(0);
      });
    }, 3_000);
  });
}
