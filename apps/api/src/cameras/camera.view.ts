import { type CameraView, cameraBitrateKbps } from '@tally/contracts';
import type { Camera } from '@tally/db';

/** The public shape of a camera row: never its key (only the key's hash is stored). */
export function toCameraView(camera: Camera, publicUrl: string, lastFrameAt: Date | undefined): CameraView {
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
    createdAt: camera.createdAt.toISOString(),
  };
}

/** Where a camera pushes and where it is watched; WebSocket URLs use ws(s) on the same host. */
export function cameraUrls(publicUrl: string, appId: string, cameraId: string) {
  const base = `${publicUrl.replace(/\/$/, '')}/v1/apps/${appId}/cameras/${cameraId}`;
  const ws = base.replace(/^http/, 'ws');
  return { ingest: `${ws}/ingest`, websocket: `${ws}/ws`, mjpeg: `${base}/mjpeg`, frame: `${base}/frame.jpg` };
}
