import { readFileSync } from 'node:fs';
import { processTree } from '../lib/proc.js';
import { MEMORY_PARTS, meanBreakdown, processBreakdown, type MemoryBreakdown } from '../lib/smaps.js';
import { fixed, markdownTable } from '../lib/table.js';

/** The egress handlers of one passthrough track, and what one of them holds on average. */
export type HandlerMemory = Readonly<{ track: 'video' | 'audio'; handlers: number; mean: MemoryBreakdown }>;

function trackOf(pid: number): 'video' | 'audio' | undefined {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
  if (!cmdline.includes('run-handler')) return undefined;
  // The request names the file it writes: `<recording>.video.<ext>` or `<recording>.audio.<ext>`.
  if (/\.video(?:-\d+)?\.[a-z0-9]+"/.test(cmdline)) return 'video';
  if (/\.audio(?:-\d+)?\.[a-z0-9]+"/.test(cmdline)) return 'audio';
  return undefined;
}

/** Every passthrough handler under `roots` (the egress service), split by the track it records. */
export function passthroughHandlers(roots: readonly number[]): HandlerMemory[] {
  const byTrack = { video: [] as MemoryBreakdown[], audio: [] as MemoryBreakdown[] };
  for (const pid of processTree(roots)) {
    const track = trackOf(pid);
    const breakdown = track === undefined ? undefined : processBreakdown(pid);
    if (track !== undefined && breakdown !== undefined) byTrack[track].push(breakdown);
  }
  return (['video', 'audio'] as const)
    .filter((t) => byTrack[t].length > 0)
    .map((track) => ({ track, handlers: byTrack[track].length, mean: meanBreakdown(byTrack[track]) }));
}

const mb = (kb: number) => fixed(kb / 1024, 2);

/** One row per part of a handler's memory, PSS / private dirty / RSS per track, then the total. */
export function handlerTable(handlers: readonly HandlerMemory[]): string {
  const total = (h: HandlerMemory, key: 'pssKb' | 'privateDirtyKb' | 'rssKb') => MEMORY_PARTS.reduce((s, p) => s + h.mean[p][key], 0);
  return markdownTable(
    ['part', ...handlers.map((h) => `${h.track} handler (mean of ${h.handlers}): PSS / private dirty / RSS MB`)],
    [
      ...MEMORY_PARTS.map((part) => [
        part,
        ...handlers.map((h) => `${mb(h.mean[part].pssKb)} / ${mb(h.mean[part].privateDirtyKb)} / ${mb(h.mean[part].rssKb)}`),
      ]),
      ['total', ...handlers.map((h) => `${mb(total(h, 'pssKb'))} / ${mb(total(h, 'privateDirtyKb'))} / ${mb(total(h, 'rssKb'))}`)],
    ],
  );
}
