import type { WorkloadKind } from './costs.js';

/** What an app's quota counts: concurrent workloads per class. */
export const QUOTA_CLASSES = [
  'streams',
  'viewers',
  'recordings',
  'room_composites',
  'ingresses',
  'transcodes',
  'cameras',
  'camera_viewers',
] as const;
export type QuotaClass = (typeof QUOTA_CLASSES)[number];
export type AppLimits = Readonly<Record<QuotaClass, number>>;
export type AppResource = `app.${QuotaClass}`;

/**
 * The classes a workload counts against. A room-composite is a recording and also a Chrome
 * recording, which has its own, smaller limit (product.md: ≈3 Chrome vs ≈10 track recordings).
 */
export function quotaClassesOf(kind: WorkloadKind): readonly QuotaClass[] {
  switch (kind) {
    case 'stream':
      return ['streams'];
    case 'viewer.webrtc':
      return ['viewers'];
    case 'ingress.rtmp':
    case 'ingress.whip':
      return ['ingresses'];
    case 'egress.room_composite':
      return ['recordings', 'room_composites'];
    case 'egress.track_composite':
    case 'egress.track':
    case 'egress.passthrough':
      return ['recordings'];
    case 'transcode.cpu':
    case 'transcode.nvenc':
      return ['transcodes'];
    case 'camera.mjpeg':
      return ['cameras'];
    case 'camera.viewer':
      return ['camera_viewers'];
  }
}

/** No quota at all (the operator's own tooling, tests); the nodes still bound everything. Infinity is not JSON. */
export function unlimited(): AppLimits {
  return Object.fromEntries(QUOTA_CLASSES.map((c) => [c, Number.POSITIVE_INFINITY])) as Record<QuotaClass, number>;
}
