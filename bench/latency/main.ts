// bench:latency — glass-to-glass latency, read from a clock drawn into the published video's pixels.
import { join } from 'node:path';
import type { RecordingView } from '@tally/contracts';
import { createStream, createTenant, issueTestCertificate, mediaNodeIp, startClientNamespace, waitFor } from '@tally/testing';
import { launchChromium, launchFirewalledChromium, openBlankPage } from '@tally/testing/browser';
import { benchArgs } from '../lib/args.js';
import { lineChartSvg, writePng } from '../lib/plot.js';
import { progress } from '../lib/progress.js';
import { RESULTS_DIR, writeResult } from '../lib/results.js';
import { startBenchStack } from '../lib/stack.js';
import { quantile } from '../lib/stats.js';
import { fixed, markdownTable } from '../lib/table.js';
import { streamToken } from '../capacity/media.js';
import {
  framesSeen,
  leave,
  preparePage,
  publishClock,
  readResults,
  resetResults,
  subscribeClock,
  type SubscriberResults,
} from './pages.js';

const args = benchArgs({ duration: 30, warmup: 5 });
const log = (m: string) => progress('latency', m);

const CONFIGS = [
  { name: 'defaults (simulcast, VP8)', simulcast: true, codec: 'vp8', record: false, turn: false },
  { name: 'simulcast off', simulcast: false, codec: 'vp8', record: false, turn: false },
  { name: 'H.264', simulcast: true, codec: 'h264', record: false, turn: false },
  { name: 'recording running', simulcast: true, codec: 'vp8', record: true, turn: false },
  // Both clients behind a firewall that drops UDP and passes only TCP to TURN over TLS (coturn) and signalling.
  { name: 'TURN/TLS (UDP blocked)', simulcast: true, codec: 'vp8', record: false, turn: true },
] as const;

/** TURN over TLS as `install.sh --domain` serves it: coturn on 5349, handed out by livekit-server (docs/adr/0042). */
const TURN_DOMAIN = 'turn.tally.test';
const TURN_TLS_PORT = 5349;
const certificate = await issueTestCertificate(TURN_DOMAIN);
log('starting Postgres, Redis, livekit-server, coturn (TURN over TLS), agent, egress and the API');
const bench = await startBenchStack({
  egress: true,
  turn: { domain: TURN_DOMAIN, certFile: certificate.certFile, keyFile: certificate.keyFile, tlsPort: TURN_TLS_PORT },
});
const browser = await launchChromium();
const firewalled = await startClientNamespace({ tcpPorts: [TURN_TLS_PORT, bench.stack.livekit.port] });
const turnBrowser = await launchFirewalledChromium(firewalled, certificate.caFile, { [TURN_DOMAIN]: mediaNodeIp() });
try {
  const { app, client } = await createTenant(bench.admin, 'bench-latency', { maxStreams: 20 });
  type Row = Readonly<{ config: string; results: SubscriberResults; note?: string }>;
  const rows: Row[] = [];
  for (const config of CONFIGS) {
    log(`${config.name}: ${args.warmup} s warm-up, ${args.duration} s measured`);
    const stream = await createStream(client, app.id, config.name);
    const [publisher, subscriber] = config.turn
      ? [await openBlankPage(turnBrowser.browser), await openBlankPage(turnBrowser.browser)]
      : [await browser.newPage(), await browser.newPage()];
    try {
      await Promise.all([preparePage(publisher), preparePage(subscriber)]);
      const pub = await streamToken(client, app.id, stream.id, 'clock', 'publisher');
      const sub = await streamToken(client, app.id, stream.id, 'watcher', 'viewer');
      await publishClock(publisher, { url: pub.url, token: pub.token, simulcast: config.simulcast, codec: config.codec });
      await subscribeClock(subscriber, sub.url, sub.token);
      await waitFor('decoded frames', async () => ((await framesSeen(subscriber)) > 0 ? true : undefined), 30_000);
      let recording: RecordingView | undefined;
      if (config.record) {
        const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, {});
        if (started.status !== 201) throw new Error(`start recording: ${started.status} ${JSON.stringify(started.body)}`);
        recording = started.body;
      }
      await new Promise((r) => setTimeout(r, args.warmup * 1000));
      await resetResults(subscriber);
      await new Promise((r) => setTimeout(r, args.duration * 1000));
      const results = await readResults(subscriber);
      if (recording) {
        const status = (await client.get<RecordingView>(`/v1/apps/${app.id}/recordings/${recording.id}`)).body.status;
        await client.post(`/v1/apps/${app.id}/recordings/${recording.id}/stop`);
        rows.push({ config: config.name, results, note: `${recording.mode}, ${status} while measured` });
      } else if (config.turn) {
        // Frames decoded at all prove the relay: the firewall lets nothing else through.
        rows.push({
          config: config.name,
          results,
          note: `both clients: UDP dropped, TCP only to coturn (${TURN_TLS_PORT}) and signalling`,
        });
      } else {
        rows.push({ config: config.name, results });
      }
      log(`${config.name}: ${results.latencies.length} frames decoded, ${results.bad} bad`);
      await Promise.all([leave(publisher), leave(subscriber)]);
    } finally {
      await publisher.close();
      await subscriber.close();
      await client.delete(`/v1/apps/${app.id}/streams/${stream.id}`);
    }
  }

  const table = markdownTable(
    ['configuration', 'codec received', 'resolution', 'frames', 'p50 ms', 'p95 ms', 'min ms', 'max ms', 'bad decodes', 'note'],
    rows.map(({ config, results: r, note }) => [
      config,
      r.codec ?? '–',
      `${r.width}x${r.height}`,
      r.frames,
      fixed(quantile(r.latencies, 0.5)),
      fixed(quantile(r.latencies, 0.95)),
      fixed(r.latencies.length ? Math.min(...r.latencies) : undefined),
      fixed(r.latencies.length ? Math.max(...r.latencies) : undefined),
      r.bad,
      note ?? '',
    ]),
  );
  const cdf = rows.map(({ config, results: r }) => {
    const sorted = [...r.latencies].sort((a, b) => a - b);
    return { name: config, points: sorted.map((v, i) => [v, (i + 1) / sorted.length] as const) };
  });
  const png = join(RESULTS_DIR, 'latency.png');
  const file = writeResult('latency', {
    args,
    rows: rows.map((r) => ({
      ...r,
      results: { ...r.results, latencies: undefined, p50: quantile(r.results.latencies, 0.5), p95: quantile(r.results.latencies, 0.95) },
    })),
    samples: Object.fromEntries(rows.map((r) => [r.config, r.results.latencies])),
  });
  await writePng(browser, lineChartSvg('Glass-to-glass latency (CDF)', 'latency (ms)', 'fraction of frames', cdf), png);
  process.stdout.write(`## Glass-to-glass latency\n\n${table}\n\nPlot: ${png}\nJSON: ${file}\n`);
} finally {
  await browser.close();
  await turnBrowser.stop();
  await firewalled.stop();
  await bench.stop();
}
