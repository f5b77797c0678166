import { load, type Load } from './resources.js';

export const WORKLOAD_KINDS = [
  'stream',
  'viewer.webrtc',
  'ingress.rtmp',
  'ingress.whip',
  'egress.room_composite',
  'egress.track_composite',
  'egress.track',
  'egress.passthrough',
  'transcode.cpu',
  'transcode.nvenc',
  'camera.mjpeg',
  'camera.viewer',
] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

/** What one running unit of a workload holds on the node that hosts it. */
export type WorkloadCost = Load & Readonly<{ nvencSessions: number }>;
export type CostTable = Readonly<Record<WorkloadKind, WorkloadCost>>;

/**
 * A process that serves many workloads of a node and exists only while at least one of them runs.
 * The agent stops an idle egress after a grace period (architecture rule 9), so its idle footprint
 * is charged to the first recording on a node and given back by the last one.
 */
export const RUNTIMES = ['egress'] as const;
export type Runtime = (typeof RUNTIMES)[number];
export type RuntimeTable = Readonly<Record<Runtime, Load>>;

export function runtimeOf(kind: WorkloadKind): Runtime | undefined {
  return kind.startsWith('egress.') ? 'egress' : undefined;
}

function cost(ramMb: number, cpuMillicores: number, nicKbps: number, nvencSessions = 0): WorkloadCost {
  return { ...load(ramMb, cpuMillicores, nicKbps), nvencSessions };
}

/**
 * Defaults from product.md's measurements on an 8 vCPU / 8 GB node; `(est.)` marks figures that
 * were not measured and that a calibration profile should replace first.
 */
export const DEFAULT_COSTS: CostTable = Object.freeze({
  // An SFU room with one simulcast publisher: tens of MB, low CPU, ~2.5 Mbps in. (CPU est.)
  stream: cost(32, 50, 2_500),
  // NIC-bound: ~2.5 Mbps per WebRTC viewer, so ~1 Gbps carries ~400. (RAM/CPU est.)
  'viewer.webrtc': cost(2, 5, 2_500),
  // RTMP is transcoded into simulcast layers. (est.)
  'ingress.rtmp': cost(150, 1_000, 3_000),
  // WHIP is forwarded without transcoding. (est.)
  'ingress.whip': cost(64, 100, 2_500),
  // Headless Chrome composing a layout: 1.274 GiB and ~0.9 core, measured.
  'egress.room_composite': cost(1_305, 900, 3_000),
  // One audio + one video muxed by GStreamer: 250–400 MB extrapolated, ~1/5 of Chrome. (CPU est.)
  'egress.track_composite': cost(300, 350, 3_000),
  // One raw track, no transcode: 150–250 MB extrapolated. (CPU est.)
  'egress.track': cost(200, 100, 2_500),
  // Two Track egresses (one video, one audio) written as sent and joined afterwards without
  // re-encoding, both inside the egress process (ADR 0048): measured by bench:capacity
  // (docs/capacity.md), 10 at once on the reference host, 3.9 MB each, 4.6 over two rounds on one
  // egress; rounded up to 6. (CPU from an earlier, quieter run.)
  'egress.passthrough': cost(6, 30, 2_500),
  // libx264 rendition of a finished recording. (est.)
  'transcode.cpu': cost(512, 2_000, 0),
  // h264_nvenc rendition: one encoder session, little CPU. (est.)
  'transcode.nvenc': cost(256, 250, 0, 1),
  // ws-mjpeg: a few MB, ~0 CPU, VGA 15 fps ≈ 2–3 Mbps. The API charges each camera's NIC from its
  // own fps and frame-size caps (QVGA 8 fps ≈ 0.5 Mbps); this figure sizes the derived quota.
  'camera.mjpeg': cost(8, 10, 3_000),
  // One MJPEG / WebSocket viewer of a camera: the shared frame goes out once more. (RAM/CPU est.)
  'camera.viewer': cost(1, 2, 3_000),
});

/** Egress idle with its warm Chrome pool: 819 MB and 0.7 % of 8 cores, measured. */
export const DEFAULT_RUNTIMES: RuntimeTable = Object.freeze({ egress: load(819, 56) });
