/**
 * Every metric the API exports under its own name, in one list: deploy/grafana and
 * deploy/prometheus may reference only these (promql.spec.ts checks it), plus the
 * process metrics prom-client adds under DEFAULT_METRICS_PREFIX.
 */
export const METRICS = {
  appQuotaLimit: 'tally_app_quota_limit',
  usageParticipantMinutes: 'tally_usage_participant_minutes_total',
  usageStreamMinutes: 'tally_usage_stream_minutes_total',
  usageRecordingMinutes: 'tally_usage_recording_minutes_total',
  usageIngressMinutes: 'tally_usage_ingress_minutes_total',
  usageHlsMinutes: 'tally_usage_hls_minutes_total',
  usageStorageGbHours: 'tally_usage_storage_gb_hours_total',
  usageCameraMinutes: 'tally_usage_camera_minutes_total',
  usageCameraViewerMinutes: 'tally_usage_camera_viewer_minutes_total',
  usageLadderMinutes: 'tally_usage_ladder_minutes_total',
  usageHlsBytesServed: 'tally_usage_hls_bytes_served_total',
  appQuotaUsed: 'tally_app_quota_used',
  appStreams: 'tally_app_streams',
  appRecordings: 'tally_app_recordings',
  appCameras: 'tally_app_cameras',
  appCamerasConnected: 'tally_app_cameras_connected',
  appCameraViewers: 'tally_app_camera_viewers',
  cameraFrames: 'tally_camera_frames_total',
  appHlsSessions: 'tally_app_hls_sessions',
  hlsSessionsEnded: 'tally_hls_sessions_ended_total',
  poolBudget: 'tally_pool_budget',
  poolReserved: 'tally_pool_reserved',
  poolFree: 'tally_pool_free',
  poolFits: 'tally_pool_fits',
  poolGuaranteed: 'tally_pool_guaranteed',
  nodes: 'tally_nodes',
  nodeHeartbeatAge: 'tally_node_heartbeat_age_seconds',
  nodeUsedCpu: 'tally_node_used_cpu_millicores',
  nodeUsedRam: 'tally_node_used_ram_mb',
  nodeDiskTotal: 'tally_node_disk_total_bytes',
  nodeDiskFree: 'tally_node_disk_free_bytes',
  nodeDiskAlertFree: 'tally_node_disk_alert_free_bytes',
  nodeDiskStopFree: 'tally_node_disk_stop_free_bytes',
  nodeDiskReserved: 'tally_node_disk_reserved_bytes',
  admissions: 'tally_admissions_total',
  rateLimited: 'tally_rate_limited_total',
  webhookDeliveries: 'tally_webhook_deliveries',
  webhookAppsQueued: 'tally_webhook_apps_queued',
  webhookAppBacklogMax: 'tally_webhook_app_backlog_max',
  queueJobs: 'tally_queue_jobs',
  recordingsFinished: 'tally_recordings_finished_total',
  recordingsCompleted24h: 'tally_recordings_completed_24h',
  recordingDuration24h: 'tally_recording_duration_seconds_24h_sum',
  recordingSize24h: 'tally_recording_size_bytes_24h_sum',
  reconcilerRepairs: 'tally_reconciler_repairs_total',
  redisFailovers: 'tally_redis_failovers_total',
  httpRequestDuration: 'tally_http_request_duration_seconds',
} as const;

export type MetricName = (typeof METRICS)[keyof typeof METRICS];
export const METRIC_NAMES: readonly MetricName[] = Object.values(METRICS);

/** prom-client's default process metrics (CPU, memory, event loop, GC) carry this prefix. */
export const DEFAULT_METRICS_PREFIX = 'tally_api_';

/** The worker adds its reconciliation repairs here (HINCRBY per kind); the API exports the totals. */
export const REPAIRS_KEY = 'tally:metrics:repairs';
