import { Injectable } from '@nestjs/common';

/** Client groups remembered at most: the oldest refusal is forgotten first (that client's next bad key costs one lookup again). */
const MAX_GROUPS = 10_000;
/** A refused client gets one unknown key looked up this often at most (a valid key found gives the slot back: foundValid). */
const LOOKUP_EVERY_MS = 1_000;

export type GateRefusal = Readonly<{ limit: number; windowS: number; retryAfterS: number }>;

/**
 * The client groups (clientGroup) this process has refused for failed authentications, until their
 * window ends. Checked before a presented key is looked up, so a client over its budget costs at
 * most one Postgres query a second for unknown keys; a valid key from that address still works (at
 * once when cached, else after at most a second when an unknown key was just looked up).
 */
@Injectable()
export class AuthFailureGate {
  private readonly refused = new Map<string, { until: number; limit: number; windowS: number; lastLookup: number }>();

  block(group: string, until: number, limit: number, windowS: number): void {
    this.refused.delete(group);
    if (this.refused.size >= MAX_GROUPS) this.refused.delete(this.refused.keys().next().value!);
    this.refused.set(group, { until, limit, windowS, lastLookup: 0 });
  }

  /** The refusal still running for `group`, if any. */
  refusal(group: string, now = Date.now()): GateRefusal | undefined {
    const entry = this.refused.get(group);
    if (entry === undefined) return undefined;
    if (entry.until <= now) {
      this.refused.delete(group);
      return undefined;
    }
    return { limit: entry.limit, windowS: entry.windowS, retryAfterS: Math.max(1, Math.ceil((entry.until - now) / 1000)) };
  }

  /** Whether a refused `group` may have one key looked up now (at most one per LOOKUP_EVERY_MS); true when it is not refused. */
  mayLookUp(group: string, now = Date.now()): boolean {
    const entry = this.refused.get(group);
    if (entry === undefined || entry.until <= now) return true;
    if (now - entry.lastLookup < LOOKUP_EVERY_MS) return false;
    entry.lastLookup = now;
    return true;
  }

  /**
   * The key looked up for `group` was valid: the slot it took is given back, so only unknown keys
   * are held to one lookup a second and the valid keys of an office behind one NAT keep working.
   */
  foundValid(group: string): void {
    const entry = this.refused.get(group);
    if (entry !== undefined) entry.lastLookup = 0;
  }

  get size(): number {
    return this.refused.size;
  }
}
