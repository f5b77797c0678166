import { z } from 'zod';

/** Ids are opaque, prefixed, url-safe; room names are derived from them only. */
export const AppId = z.string().regex(/^app_[a-z0-9]{16}$/, 'must be an app id');
export const KeyId = z.string().regex(/^key_[a-z0-9]{16}$/, 'must be a key id');
export const StreamId = z.string().regex(/^str_[a-z0-9]{16}$/, 'must be a stream id');
export const RecordingId = z.string().regex(/^rec_[a-z0-9]{16}$/, 'must be a recording id');
export const IngressId = z.string().regex(/^ing_[a-z0-9]{16}$/, 'must be an ingress id');
export const CameraId = z.string().regex(/^cam_[a-z0-9]{16}$/, 'must be a camera id');
export const HlsSessionId = z.string().regex(/^hls_[a-z0-9]{16}$/, 'must be an HLS session id');
export const WebhookEventId = z.string().regex(/^evt_[a-z0-9]{16}$/, 'must be an event id');
export const WebhookDeliveryId = z.string().regex(/^dlv_[a-z0-9]{16}$/, 'must be a delivery id');

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export type IdPrefix = 'app' | 'key' | 'str' | 'rec' | 'ing' | 'evt' | 'dlv' | 'cam' | 'cvw' | 'hls';

/**
 * `prefix_` + 16 random lowercase alphanumerics (~82 bits). Web Crypto (`globalThis.crypto`, in
 * Node and every browser) keeps this package importable by the dashboard's bundle.
 */
export function newId(prefix: IdPrefix): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  let body = '';
  for (const byte of bytes) body += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${body}`;
}
