import {
  AppUsageView,
  CapacityCheckBody,
  CapacityCheckResult,
  CapacityQuery,
  CapacityView,
  NodeList,
  NodeParams,
  NodeView,
  UpdateNodeBody,
  WorkerList,
  ApiKeyList,
  AppList,
  AppParams,
  AppView,
  CreateAppBody,
  CreatedApiKey,
  CreateStreamBody,
  CreateTokenBody,
  ErrorBody,
  Health,
  KeyParams,
  LimitRefusal,
  StreamList,
  StreamListQuery,
  StreamParams,
  StreamToken,
  StreamView,
  UpdateAppBody,
} from '@tally/contracts';
import { CLUSTER_ROUTES } from './routes.cluster.js';
import { errors, type RouteSpec } from './route-spec.js';
import { CAMERA_ROUTES } from './routes.cameras.js';
import { HLS_ROUTES } from './routes.hls.js';
import { INGRESS_ROUTES } from './routes.ingresses.js';
import { RECORDING_ROUTES } from './routes.recordings.js';
import { WEBHOOK_ROUTES } from './routes.webhooks.js';

const CORE_ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/apps',
    summary: 'Create an app',
    auth: 'admin',
    body: CreateAppBody,
    responses: { 201: AppView, ...errors },
  },
  { method: 'get', path: '/v1/apps', summary: 'List apps', auth: 'admin', responses: { 200: AppList, 401: ErrorBody } },
  {
    method: 'get',
    path: '/v1/apps/{appId}',
    summary: 'Get an app with its quotas and usage',
    auth: 'app',
    params: AppParams,
    responses: { 200: AppView, ...errors },
  },
  {
    method: 'patch',
    path: '/v1/apps/{appId}',
    summary:
      "Change an app: name, quota caps and guarantees (admin key only), webhook URL and recording settings (admin or the app's key). " +
      'Caps may sum to more than the pool; guarantees of all apps must fit it together: a guarantee that does not is a 409 whose ' +
      'details name the quota (`quota`, `field`) and the units still free for it (`room`).',
    auth: 'app',
    params: AppParams,
    body: UpdateAppBody,
    responses: { 200: AppView, ...errors, 403: ErrorBody, 409: ErrorBody },
  },
  {
    method: 'delete',
    path: '/v1/apps/{appId}',
    summary:
      'Delete an app: gone at once (404, keys revoked, webhooks stopped); the next sweep stops everything it runs and releases its reservations; files go after TALLY_APP_RETENTION_S',
    auth: 'admin',
    params: AppParams,
    responses: { 204: null, ...errors },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/keys',
    summary: 'Create an API key (shown once)',
    auth: 'admin',
    params: AppParams,
    responses: { 201: CreatedApiKey, ...errors },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/keys',
    summary: 'List active API keys (no secrets)',
    auth: 'admin',
    params: AppParams,
    responses: { 200: ApiKeyList, ...errors },
  },
  {
    method: 'delete',
    path: '/v1/apps/{appId}/keys/{keyId}',
    summary: 'Revoke an API key immediately',
    auth: 'admin',
    params: KeyParams,
    responses: { 204: null, ...errors },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/streams',
    summary:
      "Create a stream (admitted against the app's cap, other apps' unused guarantees and a node budget first). A 429 names the " +
      'resource: `app.streams` (the cap), `pool.guaranteed` (the rest of the pool is guaranteed to other apps; `heldResource` says ' +
      'which node resource), or `node.ram` / `node.cpu` / `node.nic`.',
    auth: 'app',
    params: AppParams,
    body: CreateStreamBody,
    responses: { 201: StreamView, ...errors, 429: LimitRefusal, 503: ErrorBody },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/streams',
    summary: 'List streams',
    auth: 'app',
    params: AppParams,
    query: StreamListQuery,
    responses: { 200: StreamList, ...errors },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/streams/{streamId}',
    summary: 'Get a stream',
    auth: 'app',
    params: StreamParams,
    responses: { 200: StreamView, ...errors },
  },
  {
    method: 'delete',
    path: '/v1/apps/{appId}/streams/{streamId}',
    summary: 'End a stream: removes its LiveKit room and releases its reservation',
    auth: 'app',
    params: StreamParams,
    responses: { 200: StreamView, ...errors, 503: ErrorBody },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/streams/{streamId}/tokens',
    summary: 'Mint a LiveKit join token for this stream',
    auth: 'app',
    params: StreamParams,
    body: CreateTokenBody,
    responses: { 201: StreamToken, ...errors, 409: ErrorBody },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/usage',
    summary: 'Per quota: units used, the limit (cap) and the guarantee (floor kept free for the app while unused)',
    auth: 'app',
    params: AppParams,
    responses: { 200: AppUsageView, ...errors },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/capacity/check',
    summary: 'Would this workload be admitted now, and if not, which limit refuses it (reserves nothing)',
    auth: 'app',
    params: AppParams,
    body: CapacityCheckBody,
    responses: { 200: CapacityCheckResult, ...errors },
  },
  {
    method: 'get',
    path: '/v1/capacity',
    summary:
      'Pool budget, reserved and free per node, how many more of each kind fit, and the guarantees: what they promise of the live ' +
      'pool, what of it is unused, and what is free for work outside guarantees; `?detail=reservations` lists what holds every reservation',
    auth: 'admin',
    query: CapacityQuery,
    responses: { 200: CapacityView, 400: ErrorBody, 401: ErrorBody },
  },
  {
    method: 'post',
    path: '/v1/reconcile',
    summary: 'Run a reconciliation sweep now (streams and reservations against LiveKit and live nodes)',
    auth: 'admin',
    responses: { 202: null, 401: ErrorBody },
  },
  {
    method: 'get',
    path: '/v1/nodes',
    summary: "Nodes from their agents' heartbeats: budget, status, reserved",
    auth: 'admin',
    responses: { 200: NodeList, 401: ErrorBody },
  },
  {
    method: 'patch',
    path: '/v1/nodes/{nodeId}',
    summary: 'Drain, disable or re-activate a node (draining and disabled nodes take no new work)',
    auth: 'admin',
    params: NodeParams,
    body: UpdateNodeBody,
    responses: { 200: NodeView, ...errors },
  },
  {
    method: 'get',
    path: '/v1/nodes/{nodeId}/workers',
    summary: "The node's media workers (egress, ingress) as its agent runs them: limits, RSS, state, uptime, last exit",
    auth: 'admin',
    params: NodeParams,
    responses: { 200: WorkerList, 401: ErrorBody, 404: ErrorBody },
  },
  {
    method: 'post',
    path: '/webhooks/livekit',
    summary: 'LiveKit webhook receiver (signed by LiveKit)',
    auth: 'livekit',
    responses: { 200: null, 401: ErrorBody },
  },
  {
    method: 'get',
    path: '/healthz',
    summary: 'Postgres, Redis and LiveKit reachability',
    auth: 'public',
    responses: { 200: Health, 503: Health },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics (text format): Bearer TALLY_METRICS_TOKEN, or loopback clients when no token is set',
    auth: 'public',
    responses: { 200: null, 401: ErrorBody, 403: ErrorBody },
  },
];

/** Every public route, with the same zod schemas the controllers validate with. */
export const ROUTES: readonly RouteSpec[] = [
  ...CORE_ROUTES,
  ...RECORDING_ROUTES,
  ...INGRESS_ROUTES,
  ...CAMERA_ROUTES,
  ...HLS_ROUTES,
  ...WEBHOOK_ROUTES,
  ...CLUSTER_ROUTES,
];
