import { Resolver } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';

/** The addresses of a webhook host, resolved for one app. */
export type ResolveHost = (host: string, appId: string) => Promise<LookupAddress[]>;

export type WebhookResolverOptions = Readonly<{
  /** One query's timeout; c-ares doubles it for each retry. */
  timeoutMs?: number;
  /** Attempts per query and server. */
  tries?: number;
  /** Names one app may have in resolution at once; one name resolving for many deliveries counts once. */
  perAppLookups?: number;
  /** DNS servers (`ip` or `ip:port`); the host's resolv.conf servers when absent. */
  servers?: readonly string[];
}>;

/** An app already has `perAppLookups` names resolving; its attempt fails now and is retried. */
export class LookupBusyError extends Error {
  readonly code = 'ELOOKUPBUSY';
}

/** The key of lookups outside any app's cap: connecting right after a capped lookup put the answer in the cache. */
export const UNCAPPED = '';
const DEFAULTS = { timeoutMs: 1_500, tries: 2, perAppLookups: 2 } as const;
const CACHE_SIZE = 10_000;
const MIN_TTL_S = 5;
const MAX_TTL_S = 60;
const LOCALHOST: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * Resolves webhook host names on c-ares (its own sockets, its own timeout) instead of getaddrinfo on
 * libuv's threadpool, which the process's file reads share: a tenant's black-holed domain then costs
 * that tenant's deliveries a bounded wait and nothing else. Concurrent lookups of one name share one
 * query, answers are kept for their TTL (at most a minute), and each app has a small cap of names in
 * resolution at once.
 */
export class WebhookResolver {
  private readonly resolver: Resolver;
  private readonly perAppLookups: number;
  private readonly inFlight = new Map<string, Promise<LookupAddress[]>>();
  private readonly byApp = new Map<string, Set<string>>();
  private readonly cache = new Map<string, { addresses: LookupAddress[]; until: number }>();

  constructor(options: WebhookResolverOptions = {}) {
    this.resolver = new Resolver({ timeout: options.timeoutMs ?? DEFAULTS.timeoutMs, tries: options.tries ?? DEFAULTS.tries });
    if (options.servers !== undefined && options.servers.length > 0) this.resolver.setServers([...options.servers]);
    this.perAppLookups = options.perAppLookups ?? DEFAULTS.perAppLookups;
  }

  /** The host's A and AAAA addresses; throws when it has none, the lookup timed out, or the app is at its cap. */
  readonly resolve: ResolveHost = async (host, appId) => {
    const name = host
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, '')
      .toLowerCase();
    const family = isIP(name);
    if (family !== 0) return [{ address: name, family }];
    if (name === 'localhost' || name.endsWith('.localhost')) return LOCALHOST;
    const cached = this.cache.get(name);
    if (cached !== undefined && cached.until > Date.now()) return cached.addresses;
    const running = this.inFlight.get(name);
    if (running !== undefined) return running;
    const names = this.byApp.get(appId) ?? new Set<string>();
    if (appId !== UNCAPPED && names.size >= this.perAppLookups)
      throw new LookupBusyError(`${names.size} webhook host names are already resolving for this app`);
    names.add(name);
    this.byApp.set(appId, names);
    const lookup = this.query(name).finally(() => {
      this.inFlight.delete(name);
      names.delete(name);
      if (names.size === 0) this.byApp.delete(appId);
    });
    this.inFlight.set(name, lookup);
    return lookup;
  };

  private async query(name: string): Promise<LookupAddress[]> {
    const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(name, { ttl: true }), this.resolver.resolve6(name, { ttl: true })]);
    const records = [
      ...(v4.status === 'fulfilled' ? v4.value.map((r) => ({ ...r, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((r) => ({ ...r, family: 6 })) : []),
    ];
    if (records.length === 0) throw v4.status === 'rejected' ? v4.reason : new Error(`${name} has no address`);
    // Kept at least a few seconds, whatever the TTL: every connect checks the policy again.
    const ttlS = Math.max(MIN_TTL_S, Math.min(MAX_TTL_S, ...records.map((r) => r.ttl)));
    const addresses = records.map((r) => ({ address: r.address, family: r.family }));
    if (this.cache.size >= CACHE_SIZE) this.cache.clear();
    this.cache.set(name, { addresses, until: Date.now() + ttlS * 1000 });
    return addresses;
  }

  /** Stops the queries still running (they fail with ECANCELLED). */
  close(): void {
    this.resolver.cancel();
  }
}
