// The API's types as the browser sees them. Copies of what libs/contracts infers from its zod schemas
// (that package also holds node-only code, so the bundle never imports it); test/contract-types.ts
// fails the typecheck when a copy drifts from its schema.

export type StreamStatus = 'created' | 'live' | 'ended';

export type StreamView = {
  id: string;
  appId: string;
  name: string;
  room: string;
  status: StreamStatus;
  publishers: number;
  participants: number;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  endReason: string | null;
};
export type StreamList = { items: StreamView[] };

export type TokenRole = 'publisher' | 'viewer';
export type StreamToken = { token: string; url: string; identity: string; role: TokenRole; expiresAt: string };

export const QUOTA_FIELDS = [
  'maxStreams',
  'maxViewers',
  'maxRecordings',
  'maxRoomComposites',
  'maxIngresses',
  'maxTranscodes',
  'maxCameras',
  'maxCameraViewers',
] as const;
export type QuotaField = (typeof QUOTA_FIELDS)[number];
export type AppQuotas = Record<QuotaField, number>;
export type QuotaOverrides = { [F in QuotaField]?: number | null | undefined };

export const RECORDING_MODES = ['room_composite', 'track_composite', 'track'] as const;
export type RecordingMode = (typeof RECORDING_MODES)[number];
export type RecordingModeSetting = 'auto' | RecordingMode;

export type AppView = {
  id: string;
  name: string;
  createdAt: string;
  quotas: AppQuotas;
  explicitQuotas: QuotaOverrides;
  usage: { streams: number };
  webhookUrl: string | null;
  /** Whether a signing secret was set; the secret itself is shown once, when rotated. */
  webhookSecretSet: boolean;
  recordingMode: RecordingModeSetting;
  recordingFallback: boolean;
  transcodeLadder: boolean;
  publicCameras: boolean;
};
export type AppList = { items: AppView[] };
export type AppSettingsPatch = {
  name?: string;
  quotas?: QuotaOverrides;
  webhookUrl?: string | null;
  recordingMode?: RecordingModeSetting;
  recordingFallback?: boolean;
  transcodeLadder?: boolean;
};

export type CreatedApiKey = { id: string; appId: string; prefix: string; createdAt: string; lastUsedAt: string | null; key: string };

export type AppUsageView = { items: { quota: QuotaField; used: number; limit: number }[] };

export const WORKLOAD_KINDS = [
  'stream',
  'viewer.webrtc',
  'ingress.rtmp',
  'ingress.whip',
  'egress.room_composite',
  'egress.track_composite',
  'egress.track',
  'transcode.cpu',
  'transcode.nvenc',
  'camera.mjpeg',
  'camera.viewer',
] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

export type LimitCode = 'quota_exceeded' | 'capacity_exhausted';
export type CapacityCheckResult =
  | { admitted: true; nodeId: string }
  | { admitted: false; code: LimitCode; resource: string; limit: number; used: number; requested: number };

export type LoadView = { ramMb: number; cpuMillicores: number; nicKbps: number };
export type CapacityView = {
  nodes: {
    nodeId: string;
    baseLoad: LoadView;
    allocatable: LoadView;
    reserved: LoadView;
    free: LoadView;
    nvencFree: number[];
    fits: Record<string, number>;
  }[];
  total: { baseLoad: LoadView; allocatable: LoadView; reserved: LoadView; free: LoadView; fits: Record<string, number> };
};

export const NODE_STATUSES = ['active', 'draining', 'disabled'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];
export type NodeListItem = {
  nodeId: string;
  role: 'origin' | 'worker' | 'media' | 'gpu';
  budget: { cpuMillicores: number; ramMb: number; nicMbps: number; gpus: { name?: string | undefined; nvencSessions: number }[] };
  used: { cpuMillicores: number; ramMb: number };
  labels: Record<string, string>;
  version: string;
  startedAt: string;
  sentAt: string;
  status: NodeStatus;
  reserved: { ramMb: number; cpuMillicores: number; nicKbps: number };
};
export type NodeList = { items: NodeListItem[] };

export type RecordingStatus = 'starting' | 'active' | 'ending' | 'complete' | 'failed';
export type RecordingView = {
  id: string;
  appId: string;
  streamId: string;
  mode: RecordingMode;
  status: RecordingStatus;
  reason: string;
  layout: string | null;
  storage: 'local' | 's3';
  location: string;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  durationS: number | null;
  sizeBytes: number | null;
  sha256: string | null;
  codecs: { type: 'video' | 'audio'; codec: string }[] | null;
  error: string | null;
  ladder: LadderView | null;
};
export type LadderView = {
  status: 'queued' | 'running' | 'ready' | 'failed';
  encoder: 'nvenc' | 'x264' | null;
  nodeId: string | null;
  renditions: { name: string; width: number; height: number; bitrateKbps: number; playlist: string }[];
  master: string | null;
  error: string | null;
};
export type RecordingList = { items: RecordingView[] };
export type StartRecordingBody = { mode: RecordingModeSetting; layout?: string };

export type WebhookEventType =
  | 'recording.started'
  | 'recording.completed'
  | 'recording.failed'
  | 'recording.ladder_ready'
  | 'recording.ladder_failed'
  | 'stream.live'
  | 'stream.ended'
  | 'ingress.refused';
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'dead';
export type WebhookDeliveryView = {
  id: string;
  eventId: string;
  eventType: WebhookEventType;
  url: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
};
export type WebhookDeliveryList = { items: WebhookDeliveryView[] };
export type WebhookSecretView = { secret: string };

/** Ingresses have no contract yet: every field but the id is read defensively. */
export type IngressView = {
  id: string;
  streamId?: string;
  kind?: string;
  status?: string;
  url?: string;
  streamKey?: string;
  createdAt?: string;
};
export type IngressList = { items: IngressView[] };

export type ErrorCode =
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'quota_exceeded'
  | 'capacity_exhausted'
  | 'upstream_unavailable'
  | 'internal';

/** The error body every route answers with; a 429 adds what ran out. */
export type ErrorBody = {
  error: {
    code: ErrorCode;
    message: string;
    details?: Record<string, unknown> | undefined;
    resource?: string;
    limit?: number;
    used?: number;
    requested?: number;
    retryAfterS?: number | undefined;
    nodeId?: string | undefined;
  };
  requestId: string;
};

export type CameraView = {
  id: string;
  appId: string;
  name: string;
  maxFps: number;
  maxFrameKb: number;
  bitrateKbps: number;
  ingestUrl: string;
  connected: boolean;
  lastFrameAt: string | null;
  viewers: number;
  createdAt: string;
};
export type CreatedCamera = CameraView & { key: string };
export type CameraList = { items: CameraView[] };
export type CreateCameraBody = { name: string; maxFps: number; maxFrameKb: number };
export type CameraToken = { token: string; expiresAt: string; mjpegUrl: string; frameUrl: string; websocketUrl: string };

export type HlsStatus = 'starting' | 'live' | 'stopped' | 'failed';
export type HlsView = {
  id: string;
  appId: string;
  streamId: string;
  mode: 'track_composite' | 'room_composite';
  preset: 'standard' | 'low_latency';
  segmentS: number;
  audio: boolean;
  status: HlsStatus;
  playlistUrl: string;
  error: string | null;
  createdAt: string;
  stoppedAt: string | null;
  purgeAt: string | null;
  purged: boolean;
};

export const JOINED_NODE_ROLES = ['media', 'worker', 'gpu'] as const;
export type JoinedNodeRole = (typeof JOINED_NODE_ROLES)[number];
export type CreateJoinTokenBody = { ttlS?: number | undefined; role?: JoinedNodeRole | undefined; name?: string | undefined };
export type JoinTokenView = { token: string; expiresAt: string; command: string };
