import { ClusterSettings, CreateJoinTokenBody, ErrorBody, JoinNodeBody, JoinTokenView } from '@tally/contracts';
import type { RouteSpec } from './route-spec.js';

export const CLUSTER_ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/nodes/join-tokens',
    summary: 'A one-time, expiring token for ./install.sh --join on a new host (shown once); 409 when this origin accepts no nodes',
    auth: 'admin',
    body: CreateJoinTokenBody,
    responses: { 201: JoinTokenView, 400: ErrorBody, 401: ErrorBody, 409: ErrorBody },
  },
  {
    method: 'post',
    path: '/v1/nodes/join',
    summary: "Exchange a join token for the cluster's settings (Redis URL, LiveKit keys, webhook URL); 401 for a used or expired token",
    auth: 'public',
    body: JoinNodeBody,
    responses: { 200: ClusterSettings, 400: ErrorBody, 401: ErrorBody, 409: ErrorBody },
  },
];
