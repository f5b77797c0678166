import { readFileSync, readlinkSync } from 'node:fs';

/** Where a process's memory lives, by the mapping that holds it (/proc/<pid>/smaps). */
export const MEMORY_PARTS = [
  'Go heap',
  'other anonymous',
  'C heap (main arena)',
  'stacks',
  'program binary',
  'GStreamer and GLib',
  'other libraries',
] as const;
export type MemoryPart = (typeof MEMORY_PARTS)[number];

export type PartUsage = Readonly<{ pssKb: number; rssKb: number; privateDirtyKb: number }>;
export type MemoryBreakdown = Readonly<Record<MemoryPart, PartUsage>>;

/**
 * Where anonymous memory lies in a Go program on 64-bit Linux: a non-PIE binary's zeroed data right
 * after its image below 4 GiB; the Go heap at a (randomised since Go 1.26) base between that and the
 * area where the kernel places mmaps top-down (C malloc arenas, thread stacks, libraries), which
 * starts near 0x7fff_ffff_ffff.
 */
const LOW_4G = 0x1_0000_0000;
const MMAP_AREA = 0x7000_0000_0000;

function partOf(start: number, name: string, binary: string): MemoryPart {
  if (name === '') return start < LOW_4G ? 'program binary' : start < MMAP_AREA ? 'Go heap' : 'other anonymous';
  if (name === '[heap]') return 'C heap (main arena)';
  if (name.startsWith('[stack')) return 'stacks';
  if (name.startsWith('[')) return 'other anonymous'; // [vdso], [vvar], [anon:…]
  if (name === binary || name === `${binary} (deleted)`) return 'program binary';
  const file = name.slice(name.lastIndexOf('/') + 1);
  if (name.includes('/gstreamer-1.0/') || /^lib(gst|glib|gobject|gio|gmodule|gthread|orc)/.test(file)) return 'GStreamer and GLib';
  return 'other libraries';
}

/**
 * Splits a process's memory by what holds it. "other anonymous" is the malloc arenas of threads
 * other than the main one (GStreamer's streaming threads, and cgo calls such as gst_init that load
 * GStreamer's plugin registry), thread stacks and the Go runtime's own metadata, which smaps cannot
 * tell apart; "program binary" includes the binary's zeroed data.
 *
 * @param binary the path of the program the process runs
 */
export function memoryBreakdown(smaps: string, binary: string): MemoryBreakdown {
  const parts = Object.fromEntries(MEMORY_PARTS.map((p) => [p, { pssKb: 0, rssKb: 0, privateDirtyKb: 0 }])) as Record<
    MemoryPart,
    { pssKb: number; rssKb: number; privateDirtyKb: number }
  >;
  let current: MemoryPart | undefined;
  for (const line of smaps.split('\n')) {
    const mapping = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      current = partOf(parseInt(mapping[1] ?? '0', 16), (mapping[2] ?? '').trim(), binary);
      continue;
    }
    const field = /^(Pss|Rss|Private_Dirty):\s+(\d+) kB/.exec(line);
    if (!field || current === undefined) continue;
    const kb = Number(field[2]);
    const part = parts[current];
    if (field[1] === 'Pss') part.pssKb += kb;
    else if (field[1] === 'Rss') part.rssKb += kb;
    else part.privateDirtyKb += kb;
  }
  return parts;
}

/** The breakdown of a live process, or undefined when it has exited. */
export function processBreakdown(pid: number): MemoryBreakdown | undefined {
  try {
    const binary = readlinkSync(`/proc/${pid}/exe`);
    return memoryBreakdown(readFileSync(`/proc/${pid}/smaps`, 'utf8'), binary);
  } catch {
    return undefined;
  }
}

/** The mean of several processes' breakdowns, part by part. */
export function meanBreakdown(all: readonly MemoryBreakdown[]): MemoryBreakdown {
  const n = Math.max(1, all.length);
  const mean = (part: MemoryPart, key: keyof PartUsage) => all.reduce((sum, b) => sum + b[part][key], 0) / n;
  return Object.fromEntries(
    MEMORY_PARTS.map((p) => [p, { pssKb: mean(p, 'pssKb'), rssKb: mean(p, 'rssKb'), privateDirtyKb: mean(p, 'privateDirtyKb') }]),
  ) as MemoryBreakdown;
}
