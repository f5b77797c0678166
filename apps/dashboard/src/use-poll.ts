import { useCallback, useEffect, useRef, useState } from 'react';

export const POLL_INTERVAL_MS = 2_500;

export type Polled<T> = Readonly<{
  data: T | undefined;
  /** The last failure; cleared by the next success. Earlier data stays on screen meanwhile. */
  error: unknown;
  loading: boolean;
  reload: () => void;
}>;

/**
 * Loads now and again every few seconds, never two requests at once. `key` identifies what is
 * loaded: when it changes, the old data is dropped and loading starts over.
 */
export function usePoll<T>(key: string, load: (signal: AbortSignal) => Promise<T>, intervalMs = POLL_INTERVAL_MS): Polled<T> {
  const [state, setState] = useState<{ key: string; data?: T; error?: unknown; loading: boolean }>({ key, loading: true });
  const loadRef = useRef(load);
  loadRef.current = load;
  const wake = useRef<() => void>(() => undefined);

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    let again = false;
    setState({ key, loading: true });

    const tick = async (): Promise<void> => {
      if (controller.signal.aborted) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      again = false;
      clearTimeout(timer);
      try {
        const data = await loadRef.current(controller.signal);
        if (!controller.signal.aborted) setState({ key, data, loading: false });
      } catch (error) {
        if (!controller.signal.aborted) setState((s) => ({ ...s, key, error, loading: false }));
      } finally {
        running = false;
        // A reload asked for while a request was in flight runs right after it, with fresh data.
        if (!controller.signal.aborted) timer = setTimeout(() => void tick(), again ? 0 : intervalMs);
      }
    };
    wake.current = () => void tick();
    void tick();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [key, intervalMs]);

  const reload = useCallback(() => wake.current(), []);
  const current = state.key === key;
  return { data: current ? state.data : undefined, error: current ? state.error : undefined, loading: !current || state.loading, reload };
}
