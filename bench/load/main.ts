// bench:load — LiveKit's own load-test scenarios against Tally's livekit-server, stepped up until a CPU target or failure.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { StreamView } from '@tally/contracts';
import { freePort, toolPath } from '@tally/testing';
import { createStream, createTenant } from '@tally/testing';
import { benchArgs } from '../lib/args.js';
import { netCounters, pidsMatching, watchTree } from '../lib/proc.js';
import { progress } from '../lib/progress.js';
import { sumMetric } from '../lib/prometheus.js';
import { type LkSummary, parseLkSummary } from './lk-summary.js';
import { RESULTS_DIR, writeResult } from '../lib/results.js';
import { lineChartSvg, writePng } from '../lib/plot.js';
import { launchChromium } from '@tally/testing/browser';
import { startBenchStack } from '../lib/stack.js';
import { fixed, markdownTable } from '../lib/table.js';

const args = benchArgs({
  audioSubs: [10, 25, 50, 100],
  meeting: [2, 4, 6, 8],
  livestreamSubs: [10, 25, 50, 100],
  duration: 20,
  targetCpu: 80,
});
const log = (m: string) => progress('load', m);

type Step = Readonly<{ scenario: string; audioPubs: number; videoPubs: number; subs: number; layout: string }>;
const scenarios: readonly (readonly Step[])[] = [
  args.audioSubs.map((n) => ({ scenario: 'large audio room', audioPubs: 10, videoPubs: 0, subs: n, layout: '4x4' })),
  args.meeting.map((n) => ({ scenario: 'large meeting', audioPubs: 0, videoPubs: n, subs: n, layout: '3x3' })),
  args.livestreamSubs.map((n) => ({ scenario: 'livestream', audioPubs: 0, videoPubs: 1, subs: n, layout: 'speaker' })),
];

const prometheusPort = await freePort();
log('starting Postgres, Redis, livekit-server (with Prometheus metrics), agent and the API');
const bench = await startBenchStack({ livekitPrometheusPort: prometheusPort });
const livekitRoots = () => pidsMatching(bench.stack.livekit.logFile.replace(/livekit\.log$/, 'livekit.yaml'));
const metrics = async () => {
  const text = await (await fetch(`http://127.0.0.1:${prometheusPort}/metrics`)).text();
  const m = (name: string, direction: string) => sumMetric(text, name, { direction });
  return {
    bytesIn: m('livekit_packet_bytes', 'incoming'),
    bytesOut: m('livekit_packet_bytes', 'outgoing'),
    packetsIn: m('livekit_packet_total', 'incoming'),
    packetsOut: m('livekit_packet_total', 'outgoing'),
    // Everything here runs in the benchmark's namespace, so all media crosses its loopback once.
    lo: netCounters('lo'),
    at: performance.now(),
  };
};

type Row = Step &
  Readonly<{
    bytesInPerS: number;
    bytesOutPerS: number;
    loBytesPerS: number;
    loPacketsPerS: number;
    packetsInPerS: number;
    packetsOutPerS: number;
    cpuPercentOfHost: number;
    lkExit: number | null;
    lk?: LkSummary;
    summary: string;
  }>;
const rows: Row[] = [];
try {
  const { app, client } = await createTenant(bench.admin, 'bench-load', { maxStreams: 100 });
  await bench.admin.patch(`/v1/apps/${app.id}`, { quotas: { maxViewers: 100_000 } });
  const cores = (await import('node:os')).cpus().length;
  for (const steps of scenarios) {
    for (const step of steps) {
      log(`${step.scenario}: ${step.audioPubs + step.videoPubs} publishers × ${step.subs} subscribers for ${args.duration} s`);
      const stream: StreamView = await createStream(client, app.id, `${step.scenario} ${step.subs}`);
      // lk joins with LiveKit's own key: a token from Tally is asked for first, which waits for the stream's room (ADR 0018).
      await client.post(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'bench-room-ready', role: 'viewer' });
      const lk = spawn(
        toolPath('lk'),
        [
          'load-test',
          ...['--url', bench.stack.livekit.wsUrl, '--api-key', bench.stack.livekit.apiKey, '--api-secret', bench.stack.livekit.apiSecret],
          ...['--room', stream.room, '--duration', `${args.duration}s`, '--num-per-second', '20', '--layout', step.layout],
          ...[
            '--audio-publishers',
            String(step.audioPubs),
            '--video-publishers',
            String(step.videoPubs),
            '--subscribers',
            String(step.subs),
          ],
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      lk.stdout.on('data', (d: Buffer) => (output += d.toString()));
      lk.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<number | null>((resolve) => lk.once('exit', (code) => resolve(code)));
      // Measure the second half of the run, once every tester has joined.
      await new Promise((r) => setTimeout(r, (args.duration * 1000) / 2));
      const before = await metrics();
      const cpu = await watchTree(livekitRoots, (args.duration * 1000) / 2 - 2_000);
      const after = await metrics();
      const lkExit = await exited;
      const seconds = (after.at - before.at) / 1000;
      const lkSummary = parseLkSummary(output);
      const rate = (a: number, b: number) => (b - a) / seconds;
      const row: Row = {
        ...step,
        bytesInPerS: rate(before.bytesIn, after.bytesIn),
        bytesOutPerS: rate(before.bytesOut, after.bytesOut),
        loBytesPerS: rate(before.lo.txBytes, after.lo.txBytes),
        loPacketsPerS: rate(before.lo.txPackets, after.lo.txPackets),
        packetsInPerS: rate(before.packetsIn, after.packetsIn),
        packetsOutPerS: rate(before.packetsOut, after.packetsOut),
        cpuPercentOfHost: cpu.cpuMillicores / (cores * 10),
        lkExit,
        ...(lkSummary ? { lk: lkSummary } : {}),
        summary: output.split('\n').slice(-25).join('\n'),
      };
      rows.push(row);
      await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`);
      log(`${step.scenario}: livekit-server at ${fixed(row.cpuPercentOfHost)} % of the host, lk exit ${String(lkExit)}`);
      // A step whose subscribers received nothing is a failure: stepping further says nothing more.
      if (row.cpuPercentOfHost >= args.targetCpu || lkExit !== 0 || !row.lk?.subscribed) break;
    }
  }
} finally {
  await bench.stop();
}

const kB = (v: number) => `${fixed(v / 1024)} kB/s`;
const table = markdownTable(
  [
    'scenario',
    'pubs',
    'subs',
    'bytes/s in+out (/proc, lo)',
    'packets/s in+out (/proc, lo)',
    'bytes/s in (Prometheus)',
    'bytes/s out (Prometheus)',
    'packets/s in (Prometheus)',
    'packets/s out (Prometheus)',
    'livekit-server CPU (% of host)',
    'tracks subscribed',
    'subscriber bitrate (total)',
    'lk',
  ],
  rows.map((r) => [
    r.scenario,
    r.audioPubs ? `${r.audioPubs} audio` : `${r.videoPubs} video`,
    r.subs,
    kB(r.loBytesPerS),
    fixed(r.loPacketsPerS),
    kB(r.bytesInPerS),
    kB(r.bytesOutPerS),
    fixed(r.packetsInPerS),
    fixed(r.packetsOutPerS),
    `${fixed(r.cpuPercentOfHost)} %`,
    r.lk ? `${r.lk.subscribed}/${r.lk.expected}` : '–',
    r.lk?.bitrate ?? '–',
    r.lkExit === 0 ? 'ok' : `exit ${String(r.lkExit)}`,
  ]),
);
const file = writeResult('load', { args, rows });
const png = join(RESULTS_DIR, 'load.png');
const series = scenarios.map((steps) => ({
  name: steps[0]?.scenario ?? '',
  points: rows.filter((r) => r.scenario === steps[0]?.scenario).map((r) => [r.subs, r.cpuPercentOfHost] as const),
}));
const browser = await launchChromium();
try {
  await writePng(browser, lineChartSvg('livekit-server CPU by subscribers', 'subscribers', 'CPU (% of host)', series), png);
} finally {
  await browser.close();
}
process.stdout.write(`## LiveKit load scenarios\n\n${table}\n\nPlot: ${png}\nJSON: ${file}\n`);
