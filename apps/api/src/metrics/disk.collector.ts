import { Injectable } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { diskStates, diskUsageOf, MB_BYTES, type DiskState } from '@tally/capacity';
import { NodeRegistry, toNodeBudget } from '@tally/nodes';
import { Gauge } from 'prom-client';
import { METRICS } from './metric-names.js';
import { MetricsRegistry } from './metrics.registry.js';

type Row = Readonly<{ node: string; disk: DiskState }>;

/**
 * Every live node's media filesystems (draining nodes still write): size, free space as the agent
 * measured it, the watermarks, and what running writers reserve. One series per filesystem; `roles`
 * lists what Tally writes there (`recordings,hls,ladders,scratch`).
 */
@Injectable()
export class DiskCollector {
  constructor(admitter: Admitter, ledger: CapacityLedger, nodes: NodeRegistry, metrics: MetricsRegistry) {
    const rows = metrics.perScrape(async (): Promise<Row[]> => {
      const list = await nodes.list();
      const usage = await ledger.usage([], []);
      const reservedMb = (key: string) => diskUsageOf(usage, key);
      return list.flatMap((n) =>
        diskStates(toNodeBudget(n).disks, admitter.model.disk, reservedMb).map((disk) => ({ node: n.nodeId, disk })),
      );
    });
    const registers = [metrics.registry];
    const perFilesystem = (name: string, help: string, pick: (d: DiskState) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['node', 'filesystem', 'mount', 'roles'] as const,
        registers,
        async collect() {
          const all = await rows();
          this.reset();
          for (const { node, disk } of all) {
            this.set({ node, filesystem: disk.key, mount: disk.mount ?? '', roles: disk.roles.join(',') }, pick(disk));
          }
        },
      });
    perFilesystem(
      METRICS.nodeDiskTotal,
      'Size of each filesystem Tally writes media to, as its agent measured it (bytes)',
      (d) => d.totalBytes,
    );
    perFilesystem(METRICS.nodeDiskFree, 'Free space of each media filesystem, as its agent measured it (bytes)', (d) => d.freeBytes);
    perFilesystem(
      METRICS.nodeDiskAlertFree,
      'Free space below which TallyNodeDiskLow fires for the filesystem (bytes)',
      (d) => d.alertFreeBytes,
    );
    perFilesystem(
      METRICS.nodeDiskStopFree,
      'Free space below which writers on the filesystem are stopped and no new one is admitted (bytes)',
      (d) => d.stopFreeBytes,
    );
    perFilesystem(
      METRICS.nodeDiskReserved,
      'What running writers reserve on the filesystem at admission: write rate × horizon + room to finalise (bytes)',
      (d) => d.reservedMb * MB_BYTES,
    );
  }
}
