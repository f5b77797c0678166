import { type CameraView, cameraBitrateKbps } from '@tally/contracts';
import type { Camera } from '@tally/db';

/** What the shared presence keys say about a camera now. */
export type CameraLive = Readonly<{ lastFrameAt: Date | undefined; viewers: number }>;

export const NOT_LIVE: CameraLive = { lastFrameAt: undefined, viewers: 0 };

/** The public shape of a camera row: never its key (only the key's hash is stored). */
export function toCameraView(camera: Camera, publicUrl: string, { lastFrameAt, viewers }: CameraLive): CameraView {
  return {
    id: camera.id,
    appId: camera.appId,
    name: camera.name,
    maxFps: camera.maxFps,
    maxFrameKb: camera.maxFrameKb,
    bitrateKbps: cameraBitrateKbps(camera.maxFps, camera.maxFrameKb),
    ingestUrl: cameraUrls(publicUrl, camera.appId, camera.id).ingest,
    connected: lastFrameAt !== undefined,
    lastFrameAt: lastFrameAt?.toISOString() ?? null,
    viewers,
    createdAt: camera.createdAt.toISOString(),
  };
}

/** Where a camera pushes and where it is watched; WebSocket URLs use ws(s) on the same host. */
export function cameraUrls(publicUrl: string, appId: string, cameraId: string) {
  const base = `${publicUrl.replace(/\/$/, '')}/v1/apps/${appId}/cameras/${cameraId}`;
  const ws = base.replace(/^http/, 'ws');
  return { ingest: `${ws}/ingest`, websocket: `${ws}/ws`, mjpeg: `${base}/mjpeg`, frame: `${base}/frame.jpg` };
}
