/**
 * Fan-out of one camera to N viewers, in the style of Icecast's listener test: curl listeners are
 * added in steps; at each step the server's CPU and the bytes it writes per second are measured
 * (/proc for CPU, `ss` for bytes sent). The same steps run against Debian's icecast2 serving the same JPEG stream, and the
 * table compares bytes delivered per CPU-second. Everything runs on loopback.
 *
 *   npm run bench:fanout                     # steps 10,25,50,100
 *   FANOUT_STEPS=50,200,400 FANOUT_MEASURE_S=10 npm run bench:fanout
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { startIcecast } from './icecast.js';
import { CurlListeners } from './listeners.js';
import { figures, sample, type StepFigures } from './proc-stats.js';
import { startTallyCamera } from './tally-camera.js';

const STEPS = (process.env['FANOUT_STEPS'] ?? '10,25,50,100').split(',').map(Number);
const MEASURE_S = Number(process.env['FANOUT_MEASURE_S'] ?? '5');
const SETTLE_S = 2;

type Row = Readonly<{ listeners: number; tally: StepFigures; icecast: StepFigures }>;

const sleep = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

async function measure(pid: number, url: string): Promise<StepFigures[]> {
  const port = Number(new URL(url).port);
  const listeners = new CurlListeners();
  const results: StepFigures[] = [];
  try {
    for (const n of STEPS) {
      listeners.growTo(n, url);
      await sleep(SETTLE_S);
      const from = sample(pid, port);
      await sleep(MEASURE_S);
      results.push(figures(from, sample(pid, port)));
    }
  } finally {
    await listeners.stopAll();
  }
  return results;
}

const tally = await startTallyCamera();
let tallyFigures: StepFigures[];
try {
  tallyFigures = await measure(tally.pid, tally.mjpegUrl);
} finally {
  await tally.stop();
}
const icecast = await startIcecast();
let icecastFigures: StepFigures[];
try {
  icecastFigures = await measure(icecast.pid, icecast.listenUrl);
} finally {
  await icecast.stop();
}

const rows: Row[] = STEPS.map((listeners, i) => ({ listeners, tally: tallyFigures[i]!, icecast: icecastFigures[i]! }));
const mb = (b: number) => (b / 1e6).toFixed(2);
const lines = [
  `Fan-out of one QVGA 8 fps JPEG stream (≈${(tally.frameBytes / 1024).toFixed(1)} KiB/frame) to curl listeners on loopback, ${cpus().length} cores, ${MEASURE_S} s per step`,
  '',
  '| listeners | Tally CPU % | Tally MB/s | Tally MB per CPU-s | icecast2 CPU % | icecast2 MB/s | icecast2 MB per CPU-s |',
  '| --------: | ----------: | ---------: | -----------------: | -------------: | ------------: | --------------------: |',
  ...rows.map(
    (r) =>
      `| ${r.listeners} | ${r.tally.cpuPercent.toFixed(1)} | ${mb(r.tally.bytesPerS)} | ${mb(r.tally.bytesPerCpuS)} | ${r.icecast.cpuPercent.toFixed(1)} | ${mb(r.icecast.bytesPerS)} | ${mb(r.icecast.bytesPerCpuS)} |`,
  ),
];
console.log(lines.join('\n'));
const dir = join(import.meta.dirname, '..', 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `fanout-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(
  file,
  JSON.stringify({ steps: STEPS, measureS: MEASURE_S, cores: cpus().length, frameBytes: tally.frameBytes, rows }, null, 2),
);
console.log(`\nwrote ${file}`);
