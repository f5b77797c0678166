/**
 * An encoder has this long after creation (or after its ingress was admitted again) to start pushing
 * before the ingress's reservation lapses; ingress_started confirms it.
 */
export const INGRESS_START_LAPSE_MS = 10 * 60_000;

/** The LiveKit participant an ingress publishes as, in its stream's room. */
export function ingressIdentity(ingressId: string): string {
  return `ingress-${ingressId}`;
}
