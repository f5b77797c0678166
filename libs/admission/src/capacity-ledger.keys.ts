/**
 * Every key of the capacity ledger. They share the hash tag `{cap}`, so any one script's keys live
 * in one Redis Cluster slot: an admission updates the app's, the node's and the pool's counters
 * together, atomically. Scripts receive them through KEYS, never build them.
 */
export const LEDGER_KEYS = {
  /** JSON record of one reservation: what it took, from whom, on which node. */
  reservation: (id: string) => `tally:{cap}:res:${id}`,
  /** zset id → lapse time (ms) of every unconfirmed reservation. */
  pending: 'tally:{cap}:pending',
  /** set of every reservation id. */
  all: 'tally:{cap}:all',
  /** hash quota class → units the app holds. */
  app: (appId: string) => `tally:{cap}:app:${appId}`,
  /** JSON of the app's explicit limits, guarantees, their unit costs and egress mode (StoredPolicy). */
  policy: (appId: string) => `tally:{cap}:policy:${appId}`,
  /** hash ramMb / cpuMillicores / nicKbps / rt:<runtime> / gpu:<i> the node's reservations hold. */
  node: (nodeId: string) => `tally:{cap}:node:${nodeId}`,
  /**
   * hash: ramMb / cpuMillicores / nicKbps held pool-wide, held:<load> (unused guarantees), g:<class> (Σ guarantees),
   * disk:<filesystem key> (MB writers reserve on that filesystem).
   */
  pool: 'tally:{cap}:pool',
} as const;

/** The seven keys a reservation's scripts touch, in the order the scripts read KEYS. */
export function reservationKeys(id: string, appId: string, nodeId: string): string[] {
  return [
    LEDGER_KEYS.reservation(id),
    LEDGER_KEYS.pending,
    LEDGER_KEYS.all,
    LEDGER_KEYS.app(appId),
    LEDGER_KEYS.policy(appId),
    LEDGER_KEYS.node(nodeId),
    LEDGER_KEYS.pool,
  ];
}
