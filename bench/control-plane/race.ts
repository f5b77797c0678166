import type { AppUsageView } from '@tally/contracts';
import type { ApiClient } from '@tally/testing';
import { createTenant } from '@tally/testing';

export type RaceResult = Readonly<{
  requests: number;
  quota: number;
  admitted: number;
  refused: number;
  other: number;
  usageUsed: number;
  overAdmissions: number;
}>;

/**
 * Fires `requests` stream creates at once, alternating between API processes, for an app whose
 * quota is `quota`: the ledger must admit exactly `quota` of them, whichever process they reach.
 */
export async function raceCheck(options: {
  admin: ApiClient;
  apiUrls: readonly string[];
  requests: number;
  quota: number;
}): Promise<RaceResult> {
  const { app, key, client } = await createTenant(options.admin, 'bench-race', { maxStreams: options.quota });
  const statuses = await Promise.all(
    Array.from({ length: options.requests }, async (_, i) => {
      const url = options.apiUrls[i % options.apiUrls.length] ?? '';
      try {
        const response = await fetch(`${url}/v1/apps/${app.id}/streams`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `race-${i}` }),
        });
        await response.arrayBuffer();
        return response.status;
      } catch {
        return 0;
      }
    }),
  );
  const usage = await client.get<AppUsageView>(`/v1/apps/${app.id}/usage`);
  const admitted = statuses.filter((s) => s === 201).length;
  const refused = statuses.filter((s) => s === 429).length;
  return {
    requests: options.requests,
    quota: options.quota,
    admitted,
    refused,
    other: options.requests - admitted - refused,
    usageUsed: streamsUsed(usage.body),
    overAdmissions: Math.max(0, admitted - options.quota),
  };
}

function streamsUsed(usage: AppUsageView): number {
  return usage.items.find((item) => item.quota === 'maxStreams')?.used ?? -1;
}
