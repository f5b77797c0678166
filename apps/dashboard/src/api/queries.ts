import { QueryClient, useMutation, useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { createContext, createElement, type ReactNode, useContext } from 'react';
import type { Api } from './client.js';

export const POLL_INTERVAL_MS = 2_500;

/**
 * Every page shows live data: each query refetches every few seconds (also in a background tab,
 * as an operator's second screen), never two requests for one key at once. A failure is shown at
 * once (no silent retries) and the last data stays on screen meanwhile.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchInterval: POLL_INTERVAL_MS, refetchIntervalInBackground: true, staleTime: 0 },
      mutations: { retry: false },
    },
  });
}

const ApiContext = createContext<Api | undefined>(undefined);

export function ApiProvider({ api, children }: { api: Api; children: ReactNode }): ReactNode {
  return createElement(ApiContext.Provider, { value: api }, children);
}

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside ApiProvider');
  return api;
}

/** GET `path` with the signed-in key, refreshed every few seconds (or `intervalMs`). */
export function useApiQuery<T>(path: string, options: { enabled?: boolean; intervalMs?: number } = {}): UseQueryResult<T> {
  const api = useApi();
  return useQuery({
    queryKey: ['api', path],
    queryFn: ({ signal }) => api.get<T>(path, signal),
    enabled: options.enabled ?? true,
    refetchInterval: options.intervalMs ?? POLL_INTERVAL_MS,
  });
}

export type ActionWork = Readonly<{ action: string; work: () => Promise<string | undefined> }>;

/**
 * A user action (create, delete, save): its failure named after `action`, the sentence its work
 * returns shown as a notice, and every query refetched after it succeeded so the page shows its
 * effect at once.
 */
export function useAction(): Readonly<{
  run: (action: string, work: () => Promise<string | undefined>) => Promise<void>;
  error: unknown;
  action: string;
  notice: string | undefined;
  busy: boolean;
}> {
  const client = useQueryClient();
  const mutation = useMutation({
    mutationFn: ({ work }: ActionWork) => work(),
    onSuccess: () => void client.invalidateQueries(),
  });
  return {
    run: async (action, work) => {
      await mutation.mutateAsync({ action, work }).catch(() => undefined);
    },
    error: mutation.error ?? undefined,
    action: mutation.variables?.action ?? '',
    notice: mutation.data,
    busy: mutation.isPending,
  };
}
