import {
  AppParams,
  CreatedIngress,
  CreateIngressBody,
  ErrorBody,
  IngressList,
  IngressListQuery,
  IngressParams,
  IngressView,
  LimitRefusal,
} from '@tally/contracts';
import { errors, type RouteSpec } from './route-spec.js';

export const INGRESS_ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/apps/{appId}/ingresses',
    idempotent: true,
    summary:
      "Create an RTMP or WHIP endpoint publishing into a stream's room (admitted against the app quota and a node budget first); the stream key is in this response only",
    auth: 'app',
    params: AppParams,
    body: CreateIngressBody,
    responses: { 201: CreatedIngress, ...errors, 409: ErrorBody, 429: LimitRefusal, 503: ErrorBody },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/ingresses',
    summary: "List the app's ingresses, newest first (no stream keys)",
    auth: 'app',
    params: AppParams,
    query: IngressListQuery,
    responses: { 200: IngressList, ...errors },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/ingresses/{ingressId}',
    summary: 'Get an ingress: kind, URL, status (no stream key)',
    auth: 'app',
    params: IngressParams,
    responses: { 200: IngressView, ...errors },
  },
  {
    method: 'delete',
    path: '/v1/apps/{appId}/ingresses/{ingressId}',
    summary: 'Delete an ingress: removes it from LiveKit (cutting off a publisher) and releases its reservation',
    auth: 'app',
    params: IngressParams,
    responses: { 204: null, ...errors, 503: ErrorBody },
  },
];
