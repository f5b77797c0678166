import { Injectable } from '@nestjs/common';
import { Admitter, CapacityLedger, reservationOwner } from '@tally/admission';
import { WORKLOAD_KINDS } from '@tally/capacity';
import {
  type AppUsageView,
  type CapacityCheckBody,
  type CapacityCheckResult,
  type CapacityQuery,
  type CapacityView,
  QUOTA_FIELD_NAMES,
  QUOTA_FIELDS,
  type ReservationView,
} from '@tally/contracts';
import { AppStorage } from '../tenancy/app-storage.js';
import { AppsRepository } from '../tenancy/apps.repository.js';
import { LiveApps } from '../tenancy/live-apps.js';
import { toFullView, toQuotaView } from '../tenancy/app-limits.js';
import { NotFoundError } from '../common/domain-error.js';
import { toDiskView } from './disk-view.js';
import { CAPACITY_RETRY_AFTER_S } from './refusal.js';

type LoadView = CapacityView['total']['free'];

@Injectable()
export class CapacityService {
  constructor(
    private readonly admitter: Admitter,
    private readonly ledger: CapacityLedger,
    private readonly apps: LiveApps,
    private readonly appRows: AppsRepository,
    private readonly storage: AppStorage,
  ) {}

  async pool(query: CapacityQuery = {}): Promise<CapacityView> {
    const nodes = (await this.admitter.headroom()).map((h) => ({
      nodeId: h.nodeId,
      baseLoad: h.baseLoad,
      allocatable: h.allocatable,
      reserved: h.used,
      free: h.free,
      nvencFree: [...h.nvencFree],
      disks: h.disks.map(toDiskView),
      fits: { ...h.units },
    }));
    const sum = (pick: (n: (typeof nodes)[number]) => LoadView): LoadView => ({
      ramMb: nodes.reduce((t, n) => t + pick(n).ramMb, 0),
      cpuMillicores: nodes.reduce((t, n) => t + pick(n).cpuMillicores, 0),
      nicKbps: nodes.reduce((t, n) => t + pick(n).nicKbps, 0),
    });
    const partition = await this.admitter.guaranteeHeadroom();
    const fits = Object.fromEntries(WORKLOAD_KINDS.map((k) => [k, nodes.reduce((t, n) => t + (n.fits[k] ?? 0), 0)]));
    return {
      nodes,
      total: {
        baseLoad: sum((n) => n.baseLoad),
        allocatable: sum((n) => n.allocatable),
        reserved: sum((n) => n.reserved),
        free: sum((n) => n.free),
        fits,
      },
      guarantees: { ...partition, guaranteed: toFullView(partition.guaranteed) },
      ...(query.detail === 'reservations' ? { reservations: await this.reservations() } : {}),
    };
  }

  /** The ledger's audit view: every reservation with what holds it, node by node, oldest first. */
  private async reservations(): Promise<ReservationView[]> {
    const held = await this.ledger.list();
    return held
      .map((r) => {
        const owner = reservationOwner(r.id);
        return {
          id: r.id,
          nodeId: r.nodeId,
          kind: r.kind,
          appId: r.appId,
          owner: owner?.type ?? null,
          resourceId: owner?.id ?? r.id,
          count: r.count,
          since: new Date(r.createdAt).toISOString(),
          confirmed: r.confirmed,
        };
      })
      .sort((a, b) => a.nodeId.localeCompare(b.nodeId) || a.since.localeCompare(b.since));
  }

  /** The what-if: would this be admitted now, and if not, which limit says no. Reserves nothing. */
  async check(appId: string, body: CapacityCheckBody): Promise<CapacityCheckResult> {
    await this.requireApp(appId);
    const result = await this.admitter.check(appId, body.kind, body.count);
    if (result.admitted) return { admitted: true };
    const { code, resource, limit, used, requested } = result.refusal;
    return {
      admitted: false,
      code,
      resource,
      limit,
      used,
      requested,
      ...(code === 'capacity_exhausted' ? { retryAfterS: CAPACITY_RETRY_AFTER_S } : {}),
    };
  }

  async usage(appId: string): Promise<AppUsageView> {
    const app = await this.appRows.find(appId);
    if (!app) throw new NotFoundError('app');
    const [limits, policy, used, storage] = await Promise.all([
      this.admitter.limitsFor(appId).then(toQuotaView),
      this.admitter.policyOf(appId),
      this.admitter.appUsage(appId),
      this.storage.usage(appId, app),
    ]);
    const guarantees = toFullView(policy.guarantees ?? {});
    return {
      items: QUOTA_FIELD_NAMES.map((quota) => ({
        quota,
        used: used[QUOTA_FIELDS[quota]] ?? 0,
        limit: limits[quota],
        guarantee: guarantees[quota],
      })),
      storage,
    };
  }

  private async requireApp(appId: string): Promise<void> {
    if (!(await this.apps.exists(appId))) throw new NotFoundError('app');
  }
}
