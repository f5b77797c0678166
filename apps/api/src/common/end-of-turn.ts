let pending: Promise<void> | undefined;

/**
 * Resolves in the check phase of the current event-loop turn (one `setImmediate` per turn, shared by
 * every caller of that turn), once every I/O callback of the turn has run.
 *
 * The hot routes wait for it before they answer, so the responses to the requests read in one turn
 * are written back to back at its end instead of one by one between the requests' work (Node's
 * `res.end()` writes at once). Each write wakes the client reading it if it fell asleep since its
 * last response, and a client faster than the API falls asleep after nearly every one; being woken
 * and run in between cost the API about 40 µs of CPU per request at 10 connections. Written
 * together, the first response wakes the client and the rest find it awake (docs/capacity.md).
 */
export function endOfTurn(): Promise<void> {
  pending ??= new Promise<void>((resolve) => {
    setImmediate(() => {
      pending = undefined;
      resolve();
    });
  });
  return pending;
}
