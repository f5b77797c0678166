import type { AppQuotaPolicy } from '@tally/capacity';

/**
 * Apps' policies kept in process (the runtime's InvalidatedCache, forgotten on every process when
 * an app's policy changes): what admission asks of it. `begin` is taken before a read and handed
 * back to `remember`, so a read that raced a change is not kept.
 */
export type PolicyCache = Readonly<{
  get(appId: string): AppQuotaPolicy | undefined;
  begin(): number;
  remember(appId: string, policy: AppQuotaPolicy, generation: number): void;
}>;
