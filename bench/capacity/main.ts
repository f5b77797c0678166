// bench:capacity — the cost profile: base load, per-recording, per-ingress and per-viewer costs on this host.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, hostname, tmpdir, totalmem } from 'node:os';
import { DEFAULT_MODEL, diskReservationMb, EGRESS_PROCESS_ENV, type NodeBudget, type WorkloadKind } from '@tally/capacity';
import { dispose } from '@livekit/rtc-node';
import { createStream, createTenant, startAppProcess } from '@tally/testing';
import { joinAndPublish, joinAsViewer, type Publisher } from '@tally/testing/media';
import type { StreamView } from '@tally/contracts';
import { benchArgs } from '../lib/args.js';
import { netCounters, watchTree, type TreeUsage } from '../lib/proc.js';
import { progress } from '../lib/progress.js';
import { RESULTS_DIR, writeResult } from '../lib/results.js';
import { startBenchStack } from '../lib/stack.js';
import { fixed, markdownTable } from '../lib/table.js';
import { nodeComponents } from './components.js';
import { startPush, startRecordings, stopRecordings, streamLive, streamToken } from './media.js';
import type { OutputCheck } from './passthrough.js';
import { measurePassthrough, type PassthroughRun } from './passthrough-phase.js';
import { handlerTable } from './handlers.js';
import { envText, measurePassthroughBaselines, parseBaselineEnvs } from './passthrough-baselines.js';
import { type FileGrowth, writeRate } from './disk-writes.js';
import { perUnit, rateOf } from './per-unit.js';
import { buildProfile, type Measured, RECORDING_KINDS, recordingsThatFit, writeProfile } from './profile.js';

const args = benchArgs({
  window: 10,
  ingress: 1,
  roomComposite: 1,
  trackComposite: 2,
  track: 3,
  passthrough: 10,
  // Further rounds of the same passthrough recordings on the same egress: whether what it keeps
  // after a round is reused by the next or grows.
  passthroughRounds: 1,
  baselinePassthrough: 0,
  // Egress as Tally runs it, but with a handler process per Track egress (docs/adr/0048).
  baselineEnv: [...Object.entries(EGRESS_PROCESS_ENV).map(([k, v]) => `${k}=${v}`), 'TALLY_EGRESS_TRACK_HANDLER=process'].join(','),
  viewers: 10,
});
/** What the baseline egresses of `--baselinePassthrough` run with; the first is the one ratios are taken to. */
const BASELINE_EGRESS_ENVS = parseBaselineEnvs(args.baselineEnv);
const log = (m: string) => progress('capacity', m);
const windowMs = args.window * 1000;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

log('starting Postgres, Redis, livekit-server, agent, egress, ingress, the API and the worker');
// A short sweep: it is what replaces a Track egress stuck STARTING (docs/recordings.md).
const bench = await startBenchStack({ egress: true, ingress: args.ingress > 0, env: { TALLY_SWEEP_INTERVAL_S: '5' } });
const worker = await startAppProcess('worker', bench.stack.env, join(tmpdir(), `tally-bench-worker-${bench.stack.nodeId}.log`));
try {
  const components = nodeComponents(bench, worker);
  await settle(5_000);
  log(`base load: ${components.length} services idle for ${args.window} s`);
  const idle = await Promise.all(components.map((c) => watchTree(c.roots, windowMs)));
  const idleOf = (name: string) => idle[components.findIndex((c) => c.name === name)] as TreeUsage;
  const egress = components.find((c) => c.name === 'egress (idle)')!;
  const ingress = components.find((c) => c.name === 'ingress (idle)')!;
  const livekit = components.find((c) => c.name === 'livekit-server')!;

  const { app, client } = await createTenant(bench.admin, 'bench-capacity', { maxStreams: 50 });
  await bench.admin.patch(`/v1/apps/${app.id}`, {
    quotas: { maxStreams: 50, maxRecordings: 100, maxRoomComposites: 20, maxIngresses: 10, maxViewers: 10_000, maxTranscodes: 10 },
  });
  const costs: Partial<Record<WorkloadKind, Measured>> = {};
  // Measured over the same window as the egress tree: the growth of the recordings directory per recording.
  const recordingsDir = bench.stack.config.recordings.dir;
  const writes: Partial<Record<WorkloadKind, number>> = {};
  const writtenFiles: Partial<Record<WorkloadKind, readonly FileGrowth[]>> = {};
  const logFiles = (files: readonly FileGrowth[]) => {
    for (const f of files) log(`  ${f.path}: ${f.bytes > 0 ? '+' : ''}${f.bytes} bytes in ${args.window} s`);
  };
  const publishers: Publisher[] = [];
  const notes: Record<string, string> = {};

  const stream = await createStream(client, app.id, 'capacity');
  const pushSeconds = 600;
  // Tally's RTMP ingress always transcodes into simulcast layers; it is the publisher for what follows.
  let push: { stop(): Promise<void> } | undefined;
  let viewerNic = 0;
  if (args.ingress > 0) {
    log('RTMP ingress (transcoding into simulcast layers), the publisher for what follows');
    push = await startPush(client, app.id, stream.id, pushSeconds, bench.stack.ingress?.logFile ?? '/dev/null');
    await settle(3_000);
    const lo0 = netCounters('lo');
    const [ingressPass, livekitOnePub] = await Promise.all([watchTree(ingress.roots, windowMs), watchTree(livekit.roots, windowMs)]);
    const lo1 = netCounters('lo');
    costs['ingress.rtmp'] = perUnit(ingressPass, idleOf('ingress (idle)'), 1);
    notes['ingress.rtmp'] = 'ffmpeg test card 640x360 25 fps x264 800 kbps + AAC, transcoded into simulcast layers';

    log(`${args.viewers} WebRTC viewers`);
    const viewers = await Promise.all(
      Array.from({ length: args.viewers }, async (_, i) => {
        const token = await streamToken(client, app.id, stream.id, `viewer-${i}`);
        const viewer = await joinAsViewer(token.url, token.token);
        await viewer.tracks;
        return viewer;
      }),
    );
    await settle(3_000);
    const lo2 = netCounters('lo');
    const livekitViewers = await watchTree(livekit.roots, windowMs);
    const lo3 = netCounters('lo');
    await Promise.all(viewers.map((v) => v.room.disconnect()));
    const bytesPerS = (a: typeof lo0, b: typeof lo0) => (b.txBytes - a.txBytes) / args.window;
    const viewerNicKbps = ((bytesPerS(lo2, lo3) - bytesPerS(lo0, lo1)) * 8) / 1000 / args.viewers;
    // A viewer's NIC cost is the bitrate of what it watches, which the apps' publishers set, not this
    // host: it is reported but stays out of the profile (the model keeps its ~2.5 Mbps per viewer).
    costs['viewer.webrtc'] = perUnit(livekitViewers, livekitOnePub, args.viewers);
    viewerNic = Math.max(0, viewerNicKbps);
    notes['viewer.webrtc'] =
      `livekit-server's share per viewer of the RTMP publisher, ${args.viewers} viewers; NIC from loopback bytes, not written to the profile`;
  } else {
    // No RTMP ingress (it refuses publishers on a saturated host): an rtc-node publisher instead.
    log('rtc-node publisher (VP8 + Opus) for the composite recordings; RTMP ingress and viewers skipped');
    const token = await streamToken(client, app.id, stream.id, 'host', 'publisher');
    publishers.push(await joinAndPublish(token.url, token.token));
    await streamLive(client, app.id, stream.id);
  }

  // Track egress records a publisher's only track: an rtc-node participant publishing audio alone.
  let audioOnlyStream: StreamView | undefined;
  const audioOnly = async (): Promise<StreamView> => {
    if (audioOnlyStream) return audioOnlyStream;
    audioOnlyStream = await createStream(client, app.id, 'capacity-audio');
    const token = await streamToken(client, app.id, audioOnlyStream.id, 'speaker', 'publisher');
    publishers.push(await joinAndPublish(token.url, token.token, { video: false }));
    await streamLive(client, app.id, audioOnlyStream.id);
    return audioOnlyStream;
  };
  const modes = [
    ['room_composite', 'egress.room_composite', args.roomComposite, 'headless Chromium + Xvfb composing the grid, 720p H.264 MP4'],
    ['track_composite', 'egress.track_composite', args.trackComposite, 'GStreamer muxing the video and audio tracks into MP4'],
    ['track', 'egress.track', args.track, 'one Opus audio track, no transcode'],
  ] as const;
  for (const [mode, kind, count, note] of modes) {
    if (count <= 0) continue;
    log(`${count} concurrent ${mode} recording(s)`);
    const recordings = await startRecordings(client, app.id, mode === 'track' ? (await audioOnly()).id : stream.id, mode, count);
    await settle(5_000);
    const [busy, written] = await Promise.all([watchTree(egress.roots, windowMs), writeRate(recordingsDir, windowMs, count)]);
    costs[kind] = perUnit(busy, idleOf('egress (idle)'), count);
    writes[kind] = written.bytesPerS;
    writtenFiles[kind] = written.files;
    logFiles(written.files);
    notes[kind] = `${note}; ${count} at once, egress tree PSS minus idle egress`;
    const done = await stopRecordings(client, app.id, recordings);
    log(`${mode}: ${done.map((r) => r.status).join(', ')}`);
    // The finished files' average, next to the growth while running (an MP4 index is written at the end).
    for (const r of done) log(`  ${r.id}: ${r.sizeBytes ?? '?'} bytes over ${r.durationS ?? '?'} s, ${rateOf(r.sizeBytes, r.durationS)}`);
    await settle(5_000);
  }
  await push?.stop();
  await Promise.all(publishers.map((p) => p.stop()));

  // Passthrough: each recording is one publisher's own room, as an app's single-publisher streams are.
  let checks: readonly OutputCheck[] = [];
  let passthrough: PassthroughRun | undefined;
  const rounds: { before: number; busy: number; after: number }[] = [];
  const phase = { client, appId: app.id, count: args.passthrough, windowMs, recordingsDir, log };
  if (args.passthrough > 0) {
    passthrough = await measurePassthrough({ ...phase, roots: egress.roots, label: 'passthrough' });
    costs['egress.passthrough'] = passthrough.cost;
    writes['egress.passthrough'] = passthrough.bytesPerS;
    writtenFiles['egress.passthrough'] = passthrough.files;
    notes['egress.passthrough'] =
      `two Track egresses per recording (VP8 → WebM, Opus → OGG), run inside the egress process, joined by ffmpeg stream copy; ${args.passthrough} at once, egress tree PSS minus idle egress`;
    checks = passthrough.checks;
    for (let round = 2; round <= args.passthroughRounds; round++) {
      const again = await measurePassthrough({ ...phase, roots: egress.roots, label: `passthrough-round-${round}` });
      rounds.push({ before: again.before.pssMb, busy: again.busy.pssMb, after: again.after.pssMb });
      checks = [...checks, ...again.checks];
    }
  }
  // The same recordings on egresses run with --baselineEnv (by default: a handler process per Track egress): baselines, in this run.
  const baselines =
    args.passthrough > 0 && args.baselinePassthrough > 0
      ? await measurePassthroughBaselines(bench.stack, BASELINE_EGRESS_ENVS, { ...phase, count: args.baselinePassthrough }, settle)
      : [];
  const baseline = baselines[0]?.run;

  const measuredAt = new Date().toISOString();
  const host = `${hostname()} (${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, shared with other test runs)`;
  const baseLoad = Object.fromEntries(
    components.flatMap((c, i) =>
      c.baseLoad && idle[i] ? [[c.baseLoad, { ramMb: idle[i].pssMb, cpuMillicores: idle[i].cpuMillicores }]] : [],
    ),
  );
  const egressIdle = idleOf('egress (idle)');
  const profile = buildProfile({
    host,
    measuredAt,
    baseLoad,
    egressIdle: { ramMb: egressIdle.pssMb, cpuMillicores: egressIdle.cpuMillicores },
    costs,
    // Not the write rates: passthrough and track write what the publisher sends, the composites
    // what COMPOSITE_ENCODING allows the content to need. Measured on the bench's own publishers
    // (flat-colour frames, a test card) they are a property of those publishers, not of this host,
    // and would shrink every reservation; they are reported, and the model keeps its rates.
  });
  mkdirSync(RESULTS_DIR, { recursive: true });
  const profilePath = join(RESULTS_DIR, 'capacity-profile.json');
  const model = writeProfile(profilePath, profile);

  const thisHost: NodeBudget = {
    id: 'this-host',
    cpuMillicores: cpus().length * 1000,
    ramMb: Math.floor(totalmem() / 2 ** 20),
    nicMbps: 1000,
    gpus: [],
  };
  const fitDefault = recordingsThatFit(DEFAULT_MODEL);
  const fitMeasured = recordingsThatFit(model);
  const fitHost = recordingsThatFit(model, thisHost);
  const cpuPct = (mc: number) => `${fixed(mc / 10, 1)} % of a core`;
  const row = (name: string, m: Measured | TreeUsage, note: string) => [
    name,
    `${fixed('pssMb' in m ? m.pssMb : m.ramMb)} MB`,
    cpuPct(m.cpuMillicores),
    note,
  ];
  const writeTable = markdownTable(
    ['mode', 'written per recording', 'per hour', 'model default', 'measured / default', 'reserves at admission (default)'],
    RECORDING_KINDS.flatMap((kind) => {
      const rate = writes[kind];
      const byDefault = DEFAULT_MODEL.disk.writeBytesPerS[kind] ?? 0;
      return rate === undefined
        ? []
        : [
            [
              kind.slice(7).replace('_', '-'),
              `${fixed(rate)} B/s (${fixed((rate * 8) / 1000)} kbit/s)`,
              `${fixed((rate * 3600) / 1e9, 2)} GB`,
              `${fixed(byDefault)} B/s`,
              byDefault > 0 ? `${fixed(rate / byDefault, 2)}` : '—',
              `${diskReservationMb(model.disk, kind)} MB`,
            ],
          ];
    }),
  );
  const componentTable = markdownTable(
    ['component', 'RAM', 'CPU', 'note'],
    [
      ...components.map((c, i) => row(c.name, idle[i] as TreeUsage, 'idle, PSS of its process tree')),
      ...RECORDING_KINDS.flatMap((kind) =>
        costs[kind] ? [row(`1 ${kind.slice(7).replace('_', '-')} recording`, costs[kind], notes[kind] ?? '')] : [],
      ),
      ...(costs['ingress.rtmp'] ? [row('1 RTMP ingress', costs['ingress.rtmp'], notes['ingress.rtmp'] ?? '')] : []),
      ...(costs['viewer.webrtc']
        ? [
            [
              ...row('1 WebRTC viewer', costs['viewer.webrtc'], notes['viewer.webrtc'] ?? '').slice(0, 3),
              `${fixed(viewerNic)} kbps; ${notes['viewer.webrtc']}`,
            ],
          ]
        : []),
    ],
  );
  const fitTable = markdownTable(
    [
      'mode',
      `fit 8 GB / 8 vCPU (measured)`,
      'fit 8 GB / 8 vCPU (built-in defaults)',
      `fit this host (${thisHost.cpuMillicores / 1000} vCPU, ${thisHost.ramMb} MB)`,
    ],
    RECORDING_KINDS.map((kind) => [kind.slice(7).replace('_', '-'), fitMeasured[kind], fitDefault[kind], fitHost[kind]]),
  );
  type Compared = { name: string; cost: Measured; fit: number; fitDefault: number | string };
  const compared = (['egress.passthrough', 'egress.track_composite', 'egress.room_composite'] as const).flatMap((kind): Compared[] => {
    const c = costs[kind];
    return c ? [{ name: kind.slice(7).replace('_', '-'), cost: c, fit: fitMeasured[kind], fitDefault: fitDefault[kind] }] : [];
  });
  for (const [i, b] of baselines.entries()) {
    // The fit the same model gives with the baseline's passthrough cost in place of this run's.
    const baselineCost = {
      ...model.costs['egress.passthrough'],
      ramMb: Math.ceil(b.run.cost.ramMb),
      cpuMillicores: Math.ceil(b.run.cost.cpuMillicores),
    };
    const baselineModel = { ...model, costs: { ...model.costs, 'egress.passthrough': baselineCost } };
    compared.splice(1 + i, 0, {
      name: `passthrough, baseline ${i + 1} (${envText(b.env)})`,
      cost: b.run.cost,
      fit: recordingsThatFit(baselineModel)['egress.passthrough'],
      fitDefault: '—',
    });
  }
  const ratioTo = (b: PassthroughRun) =>
    passthrough === undefined
      ? undefined
      : { ram: passthrough.cost.ramMb / b.cost.ramMb, cpu: passthrough.cost.cpuMillicores / b.cost.cpuMillicores };
  const baselineRatio = baseline === undefined ? undefined : ratioTo(baseline);
  const rcFit = fitMeasured['egress.room_composite'];
  const compareTable = markdownTable(
    [
      'mode',
      'RAM per recording',
      'CPU per recording',
      'fit 8 vCPU / 8 GB (measured)',
      'vs room-composite',
      'fit 8 vCPU / 8 GB (built-in defaults)',
    ],
    compared.map((c) => [
      c.name,
      `${fixed(c.cost.ramMb)} MB`,
      cpuPct(c.cost.cpuMillicores),
      c.fit,
      rcFit > 0 ? `${fixed(c.fit / rcFit, 1)}×` : '—',
      c.fitDefault,
    ]),
  );
  const checkTable = markdownTable(
    ['passthrough recording', 'streams (ffprobe)', 'duration s', 'recorded s', 'ok', 'note'],
    [...checks, ...baselines.flatMap((b) => b.run.checks)].map((c) => [
      c.id,
      c.streams.join(' + '),
      fixed(c.durationS, 1),
      fixed(c.recordedS, 1),
      c.ok ? 'yes' : 'NO',
      c.note,
    ]),
  );
  const rc = costs['egress.room_composite'];
  const tc = costs['egress.track_composite'];
  const ratios = rc && tc ? { ram: tc.ramMb / rc.ramMb, cpu: tc.cpuMillicores / rc.cpuMillicores } : undefined;
  const file = writeResult('capacity', {
    args,
    idle: components.map((c, i) => ({ name: c.name, ...idle[i] })),
    costs,
    viewerNicKbps: viewerNic,
    diskWriteBytesPerS: writes,
    diskDefaultBytesPerS: DEFAULT_MODEL.disk.writeBytesPerS,
    diskWrittenFiles: writtenFiles,
    fitMeasured,
    fitDefault,
    fitHost,
    ratios,
    passthrough: {
      checks,
      vsRoomComposite: rcFit > 0 ? fitMeasured['egress.passthrough'] / rcFit : null,
      handlers: passthrough?.handlers,
      treePssMb: passthrough && { before: passthrough.before.pssMb, busy: passthrough.busy.pssMb, after: passthrough.after.pssMb },
      laterRoundsTreePssMb: rounds,
      baselines: baselines.map((b) => ({
        env: b.env,
        cost: b.run.cost,
        treePssMb: { before: b.run.before.pssMb, busy: b.run.busy.pssMb, after: b.run.after.pssMb },
        checks: b.run.checks,
        handlers: b.run.handlers,
        vs: ratioTo(b.run),
      })),
      vsBaseline: baselineRatio,
      env: EGRESS_PROCESS_ENV,
    },
    profilePath,
  });
  process.stdout.write(
    [
      '## Cost profile',
      '',
      componentTable,
      '',
      '## Disk written per recording (reported, not written to the profile)',
      '',
      writeTable,
      '',
      '## Concurrent recordings that fit',
      '',
      fitTable,
      '',
      ratios ? `track-composite : room-composite = ${ratios.ram.toFixed(2)} (RAM), ${ratios.cpu.toFixed(2)} (CPU)` : '',
      '',
      '## Passthrough vs track-composite vs room-composite',
      '',
      compareTable,
      '',
      ...baselines.flatMap((b, i) => {
        const r = ratioTo(b.run);
        return r ? [`passthrough : baseline ${i + 1} = ${r.ram.toFixed(2)} (RAM), ${r.cpu.toFixed(2)} (CPU)`, ''] : [];
      }),
      ...(passthrough && passthrough.handlers.length > 0
        ? [`## One passthrough handler's memory (${envText(EGRESS_PROCESS_ENV)})`, '', handlerTable(passthrough.handlers), '']
        : []),
      ...baselines.flatMap((b, i) =>
        b.run.handlers.length > 0
          ? [`## One passthrough handler's memory, baseline ${i + 1} (${envText(b.env)})`, '', handlerTable(b.run.handlers), '']
          : [],
      ),
      ...(checks.length > 0 ? ['## Passthrough outputs checked', '', checkTable, ''] : []),
      `Profile (TALLY_CAPACITY_PROFILE): ${profilePath}`,
      `JSON: ${file}`,
      '',
    ].join('\n'),
  );
} finally {
  await worker.stop();
  await bench.stop();
  // rtc-node's native runtime keeps the process alive until it is disposed.
  await dispose();
}
