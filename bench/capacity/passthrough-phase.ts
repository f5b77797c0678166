import type { ApiClient } from '@tally/testing';
import { watchTree, type TreeUsage } from '../lib/proc.js';
import { fixed } from '../lib/table.js';
import { writeRate, type FileGrowth } from './disk-writes.js';
import { passthroughHandlers, type HandlerMemory } from './handlers.js';
import { type OutputCheck, passthroughRooms, startPassthrough, stopAndCheck } from './passthrough.js';
import type { Measured } from './profile.js';

export type PassthroughRun = Readonly<{
  /** Per recording: the egress tree while they ran minus the same tree with only the publishers. */
  cost: Measured;
  busy: TreeUsage;
  before: TreeUsage;
  /** The same tree once every recording ended (publishers still up): what the egress kept of them. */
  after: TreeUsage;
  bytesPerS: number;
  files: readonly FileGrowth[];
  checks: readonly OutputCheck[];
  /** The handlers' memory by part, sampled halfway through the window. */
  handlers: readonly HandlerMemory[];
}>;

export type PassthroughPhase = Readonly<{
  client: ApiClient;
  appId: string;
  count: number;
  windowMs: number;
  /** The egress service's process (its handlers are its children). */
  roots: () => number[];
  recordingsDir: string;
  /** Names the phase's streams, so two phases of one run stay apart. */
  label: string;
  log: (message: string) => void;
}>;

/**
 * `count` passthrough recordings at once, each of its own single-publisher room (an rtc-node
 * participant, VP8 + Opus), as an app's single-publisher streams are; checked as a user would
 * once stopped.
 */
export async function measurePassthrough(phase: PassthroughPhase): Promise<PassthroughRun> {
  const { client, appId, count, windowMs, roots, log } = phase;
  const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
  log(`${count} single-publisher rooms (rtc-node, VP8 + Opus) for passthrough (${phase.label})`);
  const rooms = await passthroughRooms(client, appId, count, phase.label);
  try {
    await settle(3_000);
    const before = await watchTree(roots, windowMs);
    log(`${count} concurrent passthrough recordings (${phase.label})`);
    const recordings = await startPassthrough(client, appId, rooms.streamIds);
    await settle(5_000);
    const [busy, written, handlers] = await Promise.all([
      watchTree(roots, windowMs),
      writeRate(phase.recordingsDir, windowMs, count),
      settle(windowMs / 2).then(() => passthroughHandlers(roots())),
    ]);
    for (const f of written.files) log(`  ${f.path}: ${f.bytes > 0 ? '+' : ''}${f.bytes} bytes in ${windowMs / 1000} s`);
    const checks = await stopAndCheck(client, appId, recordings);
    log(
      `passthrough outputs (${phase.label}): ${checks.filter((c) => c.ok).length}/${checks.length} with video + audio and the right duration`,
    );
    for (const c of checks) log(`  ${c.id}: ${c.bytes} bytes over ${fixed(c.durationS, 1)} s`);
    for (const c of checks.filter((x) => !x.ok)) log(`  ${c.id}: ${c.streams.join('+')} ${c.durationS} s of ${c.recordedS} s ${c.note}`);
    await settle(5_000);
    const after = await watchTree(roots, windowMs);
    log(
      `egress tree PSS (${phase.label}): ${fixed(before.pssMb)} MB before, ${fixed(busy.pssMb)} MB recording, ${fixed(after.pssMb)} MB after`,
    );
    return {
      cost: {
        ramMb: Math.max(0, busy.pssMb - before.pssMb) / count,
        cpuMillicores: Math.max(0, busy.cpuMillicores - before.cpuMillicores) / count,
      },
      busy,
      before,
      after,
      bytesPerS: written.bytesPerS,
      files: written.files,
      checks,
      handlers,
    };
  } finally {
    await Promise.all(rooms.publishers.map((p) => p.stop()));
  }
}
