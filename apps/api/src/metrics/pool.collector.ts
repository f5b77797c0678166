import { Injectable } from '@nestjs/common';
import { Admitter } from '@tally/admission';
import { type Load } from '@tally/capacity';
import { NodeStatus } from '@tally/contracts';
import { NodeRegistry } from '@tally/nodes';
import { Gauge } from 'prom-client';
import { Clock } from '../common/clock.js';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';

/** Metric label per capacity-model resource. */
const RESOURCES = { ramMb: 'ram_mb', cpuMillicores: 'cpu_millicores', nicKbps: 'nic_kbps' } as const satisfies Record<keyof Load, string>;

/** The node pool: budget, reservations and headroom per schedulable node and resource; agents' heartbeats. */
@Injectable()
export class PoolCollector {
  constructor(admitter: Admitter, nodes: NodeRegistry, clock: Clock, metrics: MetricsRegistry) {
    const headroom = metrics.perScrape(() => admitter.headroom());
    const heartbeats = metrics.perScrape(() => nodes.list());
    const registers = [metrics.registry];
    const perResource = (name: string, help: string, pick: (h: Awaited<ReturnType<typeof headroom>>[number]) => Load) =>
      new Gauge({
        name,
        help,
        labelNames: ['node', 'resource'] as const,
        registers,
        async collect() {
          const rows = await headroom();
          this.reset();
          for (const h of rows) {
            const load = pick(h);
            for (const [key, resource] of Object.entries(RESOURCES) as [keyof Load, string][]) {
              this.set({ node: h.nodeId, resource }, load[key]);
            }
          }
        },
      });

    perResource(METRICS.poolBudget, 'What admitted work may use on each schedulable node (budget minus base load)', (h) => h.allocatable);
    perResource(METRICS.poolReserved, 'What admitted work holds on each schedulable node', (h) => h.used);
    perResource(METRICS.poolFree, 'Free capacity on each schedulable node', (h) => h.free);
    const partition = metrics.perScrape(() => admitter.guaranteeHeadroom());
    new Gauge({
      name: METRICS.poolGuaranteed,
      help: 'The live pool as guarantees partition it: promised (all guarantees), unused (kept free for their apps), free (left for work outside guarantees)',
      labelNames: ['state', 'resource'] as const,
      registers,
      async collect() {
        const p = await partition();
        this.reset();
        for (const state of ['promised', 'unused', 'free'] as const) {
          for (const [key, resource] of Object.entries(RESOURCES) as [keyof Load, string][]) this.set({ state, resource }, p[state][key]);
        }
      },
    });
    new Gauge({
      name: METRICS.poolFits,
      help: 'How many more of each workload kind fit on each schedulable node now, each kind on its own',
      labelNames: ['node', 'kind'] as const,
      registers,
      async collect() {
        const rows = await headroom();
        this.reset();
        for (const h of rows) for (const [kind, n] of Object.entries(h.units)) this.set({ node: h.nodeId, kind }, n);
      },
    });
    new Gauge({
      name: METRICS.nodes,
      help: 'Nodes with a live heartbeat, by operator status',
      labelNames: ['status'] as const,
      registers,
      async collect() {
        const list = await heartbeats();
        this.reset();
        for (const status of NodeStatus.options) this.set({ status }, list.filter((n) => n.status === status).length);
      },
    });
    new Gauge({
      name: METRICS.nodeHeartbeatAge,
      help: "Seconds since each live node's agent sent its last heartbeat",
      labelNames: ['node'] as const,
      registers,
      async collect() {
        const list = await heartbeats();
        const now = clock.now().getTime();
        this.reset();
        for (const n of list) this.set({ node: n.nodeId }, Math.max(0, (now - Date.parse(n.sentAt)) / 1000));
      },
    });
    new Gauge({
      name: METRICS.nodeUsedCpu,
      help: 'CPU the whole host uses, as its agent measured it (millicores)',
      labelNames: ['node'] as const,
      registers,
      async collect() {
        const list = await heartbeats();
        this.reset();
        for (const n of list) this.set({ node: n.nodeId }, n.used.cpuMillicores);
      },
    });
    new Gauge({
      name: METRICS.nodeUsedRam,
      help: 'RAM the whole host uses, as its agent measured it (MB)',
      labelNames: ['node'] as const,
      registers,
      async collect() {
        const list = await heartbeats();
        this.reset();
        for (const n of list) this.set({ node: n.nodeId }, n.used.ramMb);
      },
    });
  }
}
