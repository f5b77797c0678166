import type { CapacityModel, WorkloadCost, WorkloadKind } from '@tally/capacity';
import { cameraBitrateKbps } from '@tally/contracts';

/**
 * A camera and each of its viewers carry the camera's own feed: the model's RAM and CPU for the kind,
 * and NIC from the camera's fps × frame-size caps (one copy in, one copy out per viewer).
 */
export function cameraUnitCost(
  model: CapacityModel,
  kind: Extract<WorkloadKind, 'camera.mjpeg' | 'camera.viewer'>,
  camera: Readonly<{ maxFps: number; maxFrameKb: number }>,
): WorkloadCost {
  return { ...model.costs[kind], nicKbps: cameraBitrateKbps(camera.maxFps, camera.maxFrameKb) };
}
