import {
  type Load,
  LOAD_KEYS,
  type NodeBudget,
  type Placement,
  type QuotaClass,
  QUOTA_CLASSES,
  type Runtime,
  type Usage,
  quotaClassesOf,
} from '@tally/capacity';
import type { Redis } from 'ioredis';
import { LEDGER_KEYS, reservationKeys } from './capacity-ledger.keys.js';
import { CONFIRM_SCRIPT, LAPSE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT, RESERVE_SCRIPT, SET_POLICY_SCRIPT } from './capacity-ledger.lua.js';
import {
  type HeldReservation,
  type LedgerOutcome,
  type LedgerSnapshot,
  NO_LIMIT,
  type PoolLedger,
  type ReserveTerms,
  type StoredPolicy,
} from './capacity-ledger.types.js';

type Commands = {
  tallyCapReserve(...args: string[]): Promise<string[]>;
  tallyCapConfirm(...args: string[]): Promise<number>;
  tallyCapRelease(...args: string[]): Promise<number>;
  tallyCapLapse(...args: string[]): Promise<number>;
  tallyCapRenew(...args: string[]): Promise<string[]>;
  tallyCapSetPolicy(...args: string[]): Promise<number>;
};

/** Ids per renewal script call, so one call never blocks Redis for long. */
const RENEW_BATCH = 1_000;
/** Lapsed reservations released per sweep call. */
const EXPIRE_BATCH = 200;

const NODE_RESOURCE: Readonly<Record<string, string>> = {
  ramMb: 'node.ram',
  cpuMillicores: 'node.cpu',
  nicKbps: 'node.nic',
  nvenc: 'node.nvenc',
  disk: 'node.disk',
};
const HELD_RESOURCE = { ramMb: 'node.ram', cpuMillicores: 'node.cpu', nicKbps: 'node.nic' } as const;

/**
 * The Redis counters behind every admission (ADR 0001, ADR 0012): reserve re-checks a placement
 * decided by libs/capacity against the live counters and the app's stored policy and applies it
 * atomically; confirm and release are idempotent; unconfirmed reservations lapse unless their
 * holder renews them (a lease for work that lives as long as one process).
 */
export class CapacityLedger {
  private readonly redis: Redis & Commands;
  private writes = 0;

  constructor(
    redis: Redis,
    private readonly now: () => number = Date.now,
  ) {
    redis.defineCommand('tallyCapReserve', { numberOfKeys: 7, lua: RESERVE_SCRIPT });
    redis.defineCommand('tallyCapConfirm', { numberOfKeys: 2, lua: CONFIRM_SCRIPT });
    redis.defineCommand('tallyCapRelease', { numberOfKeys: 7, lua: RELEASE_SCRIPT });
    redis.defineCommand('tallyCapLapse', { numberOfKeys: 7, lua: LAPSE_SCRIPT });
    redis.defineCommand('tallyCapRenew', { numberOfKeys: 1, lua: RENEW_SCRIPT });
    redis.defineCommand('tallyCapSetPolicy', { numberOfKeys: 3, lua: SET_POLICY_SCRIPT });
    this.redis = redis as Redis & Commands;
  }

  async reserve(
    id: string,
    placement: Placement,
    terms: ReserveTerms,
    gpus: NodeBudget['gpus'],
    lapseAfterMs: number,
  ): Promise<LedgerOutcome> {
    const { reservation } = placement;
    const gpuIndex = reservation.gpuIndex;
    const classes = quotaClassesOf(reservation.kind);
    const request = {
      appId: reservation.appId,
      nodeId: reservation.nodeId,
      kind: reservation.kind,
      count: reservation.count,
      classes,
      defaults: Object.fromEntries(classes.map((cls) => [cls, Number.isFinite(terms.defaults[cls]) ? terms.defaults[cls] : NO_LIMIT])),
      enforce: terms.enforce,
      load: whole(placement.workload),
      allocatable: floor(placement.allocatable),
      ...(placement.runtime ? { runtime: { name: placement.runtime.name, idle: whole(placement.runtime.idle) } } : {}),
      ...(gpuIndex !== undefined && placement.nvencSessions > 0
        ? { gpu: { index: gpuIndex, sessions: placement.nvencSessions, limit: gpus[gpuIndex]?.nvencSessions ?? 0 } }
        : {}),
      ...(placement.disk
        ? { disk: { key: placement.disk.key, mb: Math.ceil(placement.disk.mb), limit: Math.floor(placement.disk.limitMb) } }
        : {}),
      pool: {
        allocatable: floor(terms.pool.allocatable),
        runtimeHolds: terms.pool.runtimeHolds.map((h) => ({ name: h.name, classes: h.classes, idle: whole(h.idle) })),
      },
    };
    const now = this.now();
    const [verdict, what, limit, used, requested] = await this.writing(() =>
      this.redis.tallyCapReserve(
        ...reservationKeys(id, reservation.appId, reservation.nodeId),
        id,
        String(now),
        String(now + lapseAfterMs),
        JSON.stringify(request),
      ),
    );
    if (verdict === 'ok') return { ok: true, alreadyHeld: false, nodeId: reservation.nodeId };
    if (verdict === 'held') return { ok: true, alreadyHeld: true, nodeId: what ?? reservation.nodeId };
    const numbers = { limit: Number(limit), used: Number(used), requested: Number(requested) };
    if (verdict === 'quota') return { ok: false, code: 'quota_exceeded', resource: `app.${what as QuotaClass}`, ...numbers };
    if (verdict === 'guaranteed') {
      return { ok: false, code: 'guaranteed', heldResource: HELD_RESOURCE[what as keyof typeof HELD_RESOURCE], ...numbers };
    }
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
    return (
      (await this.writing(() => this.redis.tallyCapConfirm(LEDGER_KEYS.reservation(id), LEDGER_KEYS.pending, id, String(this.now())))) === 1
    );
  }

  /** True when this call gave the reservation back. */
  async release(id: string): Promise<boolean> {
    for (;;) {
      const held = await this.held(id);
      if (!held) return false;
      const released = await this.writing(() =>
        this.redis.tallyCapRelease(...reservationKeys(id, held.appId, held.nodeId), id, held.appId, held.nodeId),
      );
      if (released !== -1) return released === 1;
    }
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
      lost.push(
        ...(await this.writing(() =>
          this.redis.tallyCapRenew(LEDGER_KEYS.pending, String(now), String(now + lapseAfterMs), ...ids.slice(i, i + RENEW_BATCH)),
        )),
      );
    }
    return lost;
  }

  /** Releases every reservation whose lapse time passed unconfirmed; returns how many. */
  async expireLapsed(): Promise<number> {
    let released = 0;
    for (;;) {
      const now = this.now();
      const ids = await this.redis.zrangebyscore(LEDGER_KEYS.pending, '-inf', `(${now}`, 'LIMIT', 0, EXPIRE_BATCH);
      if (ids.length === 0) return released;
      for (const id of ids) {
        const held = await this.held(id);
        const [appId, nodeId] = held ? [held.appId, held.nodeId] : ['', ''];
        const lapsed = await this.writing(() =>
          this.redis.tallyCapLapse(...reservationKeys(id, appId, nodeId), id, appId, nodeId, String(now)),
        );
        if (lapsed === 1) released += 1;
      }
      if (ids.length < EXPIRE_BATCH) return released;
    }
  }

  /** The app's stored policy, or undefined when Redis has none (never written, or Redis lost it). */
  async policy(appId: string): Promise<StoredPolicy | undefined> {
    const raw = await this.redis.get(LEDGER_KEYS.policy(appId));
    return raw ? (JSON.parse(raw) as StoredPolicy) : undefined;
  }

  /** Stores (or, with undefined, drops) the app's policy, moving the pool's guarantee counters with it. */
  async writePolicy(appId: string, policy: StoredPolicy | undefined): Promise<void> {
    await this.writing(() =>
      this.redis.tallyCapSetPolicy(
        LEDGER_KEYS.policy(appId),
        LEDGER_KEYS.app(appId),
        LEDGER_KEYS.pool,
        policy === undefined ? '' : JSON.stringify(policy),
      ),
    );
  }

  /**
   * Moves whenever a write through this ledger starts and again when it ends: a read begun at an
   * earlier value may not show every write this process has made since (Admitter.check's shared reads).
   */
  get writeCount(): number {
    return this.writes;
  }

  private async writing<T>(write: () => Promise<T>): Promise<T> {
    this.writes += 1;
    try {
      return await write();
    } finally {
      this.writes += 1;
    }
  }

  async pool(): Promise<PoolLedger> {
    return toPoolLedger(await this.redis.hgetall(LEDGER_KEYS.pool));
  }

  /** The counters as libs/capacity's Usage value, for the placement decision and for gauges. */
  async usage(nodeIds: readonly string[], appIds: readonly string[]): Promise<Usage> {
    return (await this.snapshot(nodeIds, appIds)).usage;
  }

  /**
   * What one admission reads, in one round trip: the nodes' and apps' counters, and on request the
   * pool's counters and the reservation already held under an id (a retried admission).
   */
  async snapshot(
    nodeIds: readonly string[],
    appIds: readonly string[],
    extra: Readonly<{ pool?: boolean; reservation?: string }> = {},
  ): Promise<LedgerSnapshot> {
    let replies = await this.readCounters(nodeIds, appIds, extra);
    // Lapsed reservations are rare: release them and read again only when the same read found one.
    if (replies.lapsed) {
      await this.expireLapsed();
      replies = await this.readCounters(nodeIds, appIds, extra);
    }
    return {
      usage: { ...this.toUsage(nodeIds, appIds, replies.hashes), disks: diskCounters(replies.pool) },
      ...(extra.pool ? { pool: toPoolLedger(replies.pool) } : {}),
      ...(replies.held ? { held: replies.held } : {}),
    };
  }

  /** The counters asked for, and whether a pending reservation has lapsed, in one round trip. */
  private async readCounters(
    nodeIds: readonly string[],
    appIds: readonly string[],
    extra: Readonly<{ pool?: boolean; reservation?: string }>,
  ): Promise<
    Readonly<{
      lapsed: boolean;
      hashes: Record<string, string>[];
      pool: Record<string, string>;
      held: HeldReservation | undefined;
    }>
  > {
    const pipeline = this.redis.pipeline();
    pipeline.zrangebyscore(LEDGER_KEYS.pending, '-inf', `(${this.now()}`, 'LIMIT', 0, 1);
    for (const id of nodeIds) pipeline.hgetall(LEDGER_KEYS.node(id));
    for (const id of appIds) pipeline.hgetall(LEDGER_KEYS.app(id));
    // Always: the disk counters are kept there, per filesystem (shared filesystems span nodes).
    pipeline.hgetall(LEDGER_KEYS.pool);
    if (extra.reservation !== undefined) pipeline.get(LEDGER_KEYS.reservation(extra.reservation));
    const replies = ((await pipeline.exec()) ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const [lapsed, ...rest] = replies;
    const hashes = rest.slice(0, nodeIds.length + appIds.length).map((h) => (h ?? {}) as Record<string, string>);
    let next = nodeIds.length + appIds.length;
    const pool = (rest[next++] ?? {}) as Record<string, string>;
    const raw = extra.reservation !== undefined ? rest[next] : undefined;
    return {
      lapsed: Array.isArray(lapsed) && lapsed.length > 0,
      hashes,
      pool,
      held: typeof raw === 'string' && extra.reservation !== undefined ? toHeld(extra.reservation, raw) : undefined,
    };
  }

  private toUsage(nodeIds: readonly string[], appIds: readonly string[], replies: Record<string, string>[]): Usage {
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
    const raw = await this.redis.get(LEDGER_KEYS.reservation(id));
    return raw ? toHeld(id, raw) : undefined;
  }

  /** The runtime counters (`rt:<runtime>`) of a node, from its own hash alone: what that node's agent may read. */
  async runtimesOn(nodeId: string): Promise<Partial<Record<Runtime, number>>> {
    const hash = await this.redis.hgetall(LEDGER_KEYS.node(nodeId));
    return this.toUsage([nodeId], [], [hash]).nodes[nodeId]?.runtimes ?? {};
  }

  /** The reservations held on a node, read only (a leaving node waits on them; lapsed ones are the worker's to release). */
  async heldOn(nodeId: string): Promise<HeldReservation[]> {
    const ids = await this.redis.smembers(LEDGER_KEYS.all);
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map((id) => LEDGER_KEYS.reservation(id)));
    return ids.flatMap((id, i) => (raws[i] ? [toHeld(id, raws[i])] : [])).filter((r) => r.nodeId === nodeId);
  }

  /** Every reservation held now (for the reconciler). */
  async list(): Promise<HeldReservation[]> {
    await this.expireLapsed();
    const ids = await this.redis.smembers(LEDGER_KEYS.all);
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map((id) => LEDGER_KEYS.reservation(id)));
    return ids.flatMap((id, i) => (raws[i] ? [toHeld(id, raws[i])] : []));
  }
}

/** MB reserved per filesystem key (pool fields `disk:<key>`). */
function diskCounters(h: Record<string, string>): Record<string, number> {
  const disks: Record<string, number> = {};
  for (const [field, value] of Object.entries(h)) if (field.startsWith('disk:')) disks[field.slice(5)] = Math.max(0, Number(value));
  return disks;
}

function toPoolLedger(h: Record<string, string>): PoolLedger {
  const num = (field: string) => Math.max(0, Number(h[field] ?? 0));
  const loadOf = (prefix: string): Load => ({
    ramMb: num(`${prefix}ramMb`),
    cpuMillicores: num(`${prefix}cpuMillicores`),
    nicKbps: num(`${prefix}nicKbps`),
  });
  return {
    used: loadOf(''),
    held: loadOf('held:'),
    guaranteed: Object.fromEntries(QUOTA_CLASSES.map((cls) => [cls, num(`g:${cls}`)])) as Record<QuotaClass, number>,
  };
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
