/**
 * Summarises a worker CPU profile (bench/webhooks/cpu-profile.mjs) as CPU time per delivery by
 * component: `node --import @swc-node/register/esm-register bench/webhooks/profile-summary.ts <file.cpuprofile> <deliveries>`.
 */
import { readFileSync } from 'node:fs';

type Node = { id: number; callFrame: { functionName: string; url: string }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const COMPONENTS: [string, RegExp][] = [
  ['BullMQ (job fetch, locks, completion)', /node_modules\/bullmq\//],
  ['ioredis (Redis protocol)', /node_modules\/ioredis\/|node_modules\/redis-parser\/|node_modules\/cluster-key-slot\//],
  [
    'Prisma client + query engine',
    /node_modules\/@prisma\/client|node_modules\/\.prisma|generated\/|query_compiler|@prisma\/client-runtime/,
  ],
  ['pg driver (adapter-pg, pg)', /node_modules\/pg|node_modules\/@prisma\/adapter-pg|node_modules\/postgres-/],
  ['undici (HTTP POST)', /node_modules\/undici\/|node:internal\/deps\/undici/],
  ['Tally worker code (jobs, signing, lanes)', /libs\/|apps\/worker\/src|dist\/worker/],
];

const [file, deliveriesArg] = process.argv.slice(2);
if (!file || !deliveriesArg) throw new Error('usage: profile-summary.ts <file.cpuprofile> <deliveries>');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const deliveries = Number(deliveriesArg);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

/** A sample counts for the nearest caller that belongs to a component: a socket write is charged to the library that wrote. */
function componentOf(id: number): string {
  const { functionName } = byId.get(id)!.callFrame;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)') return 'V8/native (program)';
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const { url } = byId.get(at)!.callFrame;
    const found = COMPONENTS.find(([, re]) => re.test(url));
    if (found) return found[0];
    if (/node:internal\/modules|node:internal\/vm/.test(url)) return 'module loading (boot)';
  }
  return 'other';
}

const totals = new Map<string, number>();
let busy = 0;
for (const [id, us] of selfUs) {
  if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
  const name = componentOf(id);
  totals.set(name, (totals.get(name) ?? 0) + us);
  busy += us;
}
const rows = [...totals.entries()].sort((a, b) => b[1] - a[1]);
console.log(`| component | CPU µs per delivery | share |\n| --- | --- | --- |`);
for (const [name, us] of rows) console.log(`| ${name} | ${(us / deliveries).toFixed(0)} | ${((100 * us) / busy).toFixed(0)} % |`);
console.log(`| **total** | **${(busy / deliveries).toFixed(0)}** | 100 % |`);
