import {
  type Load,
  LOAD_KEYS,
  type NodeBudget,
  type Placement,
  type QuotaClass,
  type Runtime,
  type Usage,
  quotaClassesOf,
} from '@tally/capacity';
import type { Redis } from 'ioredis';
import { CONFIRM_SCRIPT, EXPIRE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT, RESERVE_SCRIPT } from './capacity-ledger.lua.js';

export type LedgerOutcome =
  | Readonly<{ ok: true; alreadyHeld: boolean }>
  | Readonly<{ ok: false; code: 'quota_exceeded'; resource: `app.${QuotaClass}`; limit: number; used: number; requested: number }>
  | Readonly<{ ok: false; code: 'capacity_exhausted'; resource: string; limit: number; used: number; requested: number; nodeId: string }>;

export type HeldReservation = Readonly<{
  id: string;
  appId: string;
  nodeId: string;
  kind: string;
  count: number;
  confirmed: boolean;
  createdAt: number;
}>;

type Commands = {
  tallyCapReserve(id: string, now: number, lapseAt: number, request: string): Promise<string[]>;
  tallyCapConfirm(id: string, now: number): Promise<number>;
  tallyCapRelease(id: string): Promise<number>;
  tallyCapExpire(now: number): Promise<number>;
  tallyCapRenew(now: number, lapseAt: number, ...ids: string[]): Promise<string[]>;
};

/** Ids per renewal script call, so one call never blocks Redis for long. */
const RENEW_BATCH = 1_000;

/** JSON has no Infinity; an unlimited class is checked against this. */
const NO_LIMIT = 1e15;

const NODE_RESOURCE: Readonly<Record<string, string>> = {
  ramMb: 'node.ram',
  cpuMillicores: 'node.cpu',
  nicKbps: 'node.nic',
  nvenc: 'node.nvenc',
};

/**
 * The Redis counters behind every admission (ADR 0002): reserve re-checks a
 * placement decided by libs/capacity against the live counters and applies it
 * atomically; confirm and release are idempotent; unconfirmed reservations lapse
 * unless their holder renews them (a lease for work that lives as long as one process).
 */
export class CapacityLedger {
  private readonly redis: Redis & Commands;

  constructor(
    redis: Redis,
    private readonly now: () => number = Date.now,
  ) {
    redis.defineCommand('tallyCapReserve', { numberOfKeys: 0, lua: RESERVE_SCRIPT });
    redis.defineCommand('tallyCapConfirm', { numberOfKeys: 0, lua: CONFIRM_SCRIPT });
    redis.defineCommand('tallyCapRelease', { numberOfKeys: 0, lua: RELEASE_SCRIPT });
    redis.defineCommand('tallyCapExpire', { numberOfKeys: 0, lua: EXPIRE_SCRIPT });
    redis.defineCommand('tallyCapRenew', { numberOfKeys: 0, lua: RENEW_SCRIPT });
    this.redis = redis as Redis & Commands;
  }

  async reserve(
    id: string,
    placement: Placement,
    limits: Readonly<Record<QuotaClass, number>>,
    gpus: NodeBudget['gpus'],
    lapseAfterMs: number,
  ): Promise<LedgerOutcome> {
    const { reservation } = placement;
    const gpuIndex = reservation.gpuIndex;
    const request = {
      appId: reservation.appId,
      nodeId: reservation.nodeId,
      kind: reservation.kind,
      count: reservation.count,
      classes: quotaClassesOf(reservation.kind).map((cls) => ({ cls, limit: Number.isFinite(limits[cls]) ? limits[cls] : NO_LIMIT })),
      load: whole(placement.workload),
      allocatable: floor(placement.allocatable),
      ...(placement.runtime ? { runtime: { name: placement.runtime.name, idle: whole(placement.runtime.idle) } } : {}),
      ...(gpuIndex !== undefined && placement.nvencSessions > 0
        ? { gpu: { index: gpuIndex, sessions: placement.nvencSessions, limit: gpus[gpuIndex]?.nvencSessions ?? 0 } }
        : {}),
    };
    const now = this.now();
    const [verdict, what, limit, used, requested] = await this.redis.tallyCapReserve(id, now, now + lapseAfterMs, JSON.stringify(request));
    if (verdict === 'ok' || verdict === 'held') return { ok: true, alreadyHeld: verdict === 'held' };
    const numbers = { limit: Number(limit), used: Number(used), requested: Number(requested) };
    if (verdict === 'quota') return { ok: false, code: 'quota_exceeded', resource: `app.${what as QuotaClass}`, ...numbers };
    return {
      ok: false,
      code: 'capacity_exhausted',
      resource: NODE_RESOURCE[what ?? ''] ?? `node.${what}`,
      nodeId: reservation.nodeId,
      ...numbers,
    };
  }

  /** True when the reservation is held (and no longer lapses); false when it lapsed or was released. */
  async confirm(id: string): Promise<boolean> {
    return (await this.redis.tallyCapConfirm(id, this.now())) === 1;
  }

  /** True when this call gave the reservation back. */
  async release(id: string): Promise<boolean> {
    return (await this.redis.tallyCapRelease(id)) === 1;
  }

  /**
   * Keeps unconfirmed reservations held as leases: each one still held now lapses `lapseAfterMs` from
   * now instead. Returns the ids that are no longer held as a lease (lapsed, released or confirmed);
   * a lapsed one is never revived.
   */
  async renew(ids: readonly string[], lapseAfterMs: number): Promise<string[]> {
    const lost: string[] = [];
    for (let i = 0; i < ids.length; i += RENEW_BATCH) {
      const now = this.now();
      lost.push(...(await this.redis.tallyCapRenew(now, now + lapseAfterMs, ...ids.slice(i, i + RENEW_BATCH))));
    }
    return lost;
  }

  async expireLapsed(): Promise<number> {
    return this.redis.tallyCapExpire(this.now());
  }

  /** The counters as libs/capacity's Usage value, for the placement decision and for gauges. */
  async usage(nodeIds: readonly string[], appIds: readonly string[]): Promise<Usage> {
    await this.expireLapsed();
    const pipeline = this.redis.pipeline();
    for (const id of nodeIds) pipeline.hgetall(`tally:cap:node:${id}`);
    for (const id of appIds) pipeline.hgetall(`tally:cap:app:${id}`);
    const replies = ((await pipeline.exec()) ?? []).map(([, value]) => (value ?? {}) as Record<string, string>);
    const nodes: Record<string, Usage['nodes'][string]> = {};
    nodeIds.forEach((id, i) => {
      const h = replies[i] ?? {};
      const nvenc: number[] = [];
      const runtimes: Partial<Record<Runtime, number>> = {};
      for (const [field, value] of Object.entries(h)) {
        if (field.startsWith('gpu:')) nvenc[Number(field.slice(4))] = Number(value);
        if (field.startsWith('rt:')) runtimes[field.slice(3) as Runtime] = Number(value);
      }
      nodes[id] = {
        load: { ramMb: Number(h['ramMb'] ?? 0), cpuMillicores: Number(h['cpuMillicores'] ?? 0), nicKbps: Number(h['nicKbps'] ?? 0) },
        nvenc: Array.from(nvenc, (n) => n ?? 0),
        runtimes,
      };
    });
    const apps: Record<string, Usage['apps'][string]> = {};
    appIds.forEach((id, i) => {
      const h = replies[nodeIds.length + i] ?? {};
      apps[id] = Object.fromEntries(Object.entries(h).map(([cls, n]) => [cls, Number(n)]));
    });
    return { nodes, apps };
  }

  async held(id: string): Promise<HeldReservation | undefined> {
    const raw = await this.redis.get(`tally:cap:res:${id}`);
    return raw ? toHeld(id, raw) : undefined;
  }

  /** Every reservation held now (for the reconciler). */
  async list(): Promise<HeldReservation[]> {
    await this.expireLapsed();
    const ids = await this.redis.smembers('tally:cap:all');
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map((id) => `tally:cap:res:${id}`));
    return ids.flatMap((id, i) => (raws[i] ? [toHeld(id, raws[i])] : []));
  }
}

function toHeld(id: string, raw: string): HeldReservation {
  const r = JSON.parse(raw) as Omit<HeldReservation, 'id'>;
  return { id, appId: r.appId, nodeId: r.nodeId, kind: r.kind, count: r.count, confirmed: r.confirmed, createdAt: r.createdAt };
}

/** Counters are integers: costs round up, limits round down, so rounding never over-admits. */
function whole(load: Load): Load {
  return { ramMb: Math.ceil(load.ramMb), cpuMillicores: Math.ceil(load.cpuMillicores), nicKbps: Math.ceil(load.nicKbps) };
}

function floor(load: Load): Record<string, number> {
  return Object.fromEntries(LOAD_KEYS.map((k) => [k, Math.floor(load[k])]));
}
