import { z } from 'zod';
import { safeText } from './text.js';
import { AppId, CameraId } from './ids.js';

/** Frames a camera may send per second; faster frames are dropped, not stored. */
export const CAMERA_DEFAULT_MAX_FPS = 8;
/** The largest JPEG a camera may send, in KiB; 8 KiB at 8 fps is product.md's QVGA figure (≈ 0.5 Mbps). */
export const CAMERA_DEFAULT_MAX_FRAME_KB = 8;

/** How Tally closes a camera's ingest WebSocket, or a viewer's; the reason text says more. */
export const CAMERA_CLOSE_CODES = {
  /** A binary message that is not a JPEG (no FF D8 … FF D9), or a text message. */
  badFrame: 4400,
  /**
   * A message larger than the camera's maxFrameKb (a viewer: than 1 KiB): WebSocket's own "message
   * too big", sent as soon as the message's header announces the size, before its bytes are read.
   */
  frameTooLarge: 1009,
  /** More than twice maxFps frames within a second: the camera is closed, not just its extra frames dropped. */
  tooFast: 4420,
  /** No frame within the idle timeout. */
  idle: 4408,
  /** A newer connection with the same key took over. */
  replaced: 4409,
  /** The camera was deleted. */
  deleted: 4410,
  /** A viewer whose place lapsed (its API process stalled) and no longer fits app.camera_viewers or the node. */
  viewerRefused: 4429,
} as const;
export type CameraCloseReason = keyof typeof CAMERA_CLOSE_CODES;

export const CreateCameraBody = z
  .strictObject({
    name: safeText(200),
    maxFps: z.number().int().min(1).max(60).default(CAMERA_DEFAULT_MAX_FPS),
    maxFrameKb: z.number().int().min(1).max(2_048).default(CAMERA_DEFAULT_MAX_FRAME_KB),
  })
  .meta({ id: 'CreateCameraBody' });
export type CreateCameraBody = z.infer<typeof CreateCameraBody>;

export const CameraView = z
  .object({
    id: CameraId,
    appId: AppId,
    name: z.string(),
    maxFps: z.number().int(),
    maxFrameKb: z.number().int(),
    /** What the camera's admission charges its node's NIC for (maxFps × maxFrameKb), and each viewer again. */
    bitrateKbps: z.number().int(),
    /** ws(s) URL the camera connects to, with `Authorization: Bearer <key>` or `?key=<key>`. */
    ingestUrl: z.string(),
    /** A camera holds a connection to this API process (or another one, as last reported). */
    connected: z.boolean(),
    lastFrameAt: z.iso.datetime().nullable(),
    /** MJPEG and WebSocket viewers watching now, on every API process (still-frame requests are not counted). */
    viewers: z.number().int(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Camera' });
export type CameraView = z.infer<typeof CameraView>;

export const CreatedCamera = CameraView.extend({
  /** The camera's ingest key. Shown once, in this response; Tally keeps only its sha256. */
  key: z.string(),
}).meta({ id: 'CreatedCamera' });
export type CreatedCamera = z.infer<typeof CreatedCamera>;

export const CameraList = z.object({ items: z.array(CameraView) }).meta({ id: 'CameraList' });
export type CameraList = z.infer<typeof CameraList>;

export const CameraParams = z.object({ appId: AppId, cameraId: CameraId });

export const CreateCameraTokenBody = z
  .strictObject({ ttlS: z.number().int().min(10).max(86_400).default(3_600) })
  .meta({ id: 'CreateCameraTokenBody' });
export type CreateCameraTokenBody = z.infer<typeof CreateCameraTokenBody>;

export const CameraToken = z
  .object({
    /** For `Authorization: Bearer`, or `?token=` where a player cannot set headers (`<img src>`). */
    token: z.string(),
    expiresAt: z.iso.datetime(),
    mjpegUrl: z.string(),
    frameUrl: z.string(),
    websocketUrl: z.string(),
  })
  .meta({ id: 'CameraToken' });
export type CameraToken = z.infer<typeof CameraToken>;

/** NIC cost of one copy of the camera's feed at its caps, in kbps (KiB × 8 × 1.024 kbit). */
export function cameraBitrateKbps(maxFps: number, maxFrameKb: number): number {
  return Math.ceil((maxFps * maxFrameKb * 8 * 1024) / 1000);
}
