import {
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
import type { z } from 'zod';

export type RouteSpec = Readonly<{
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  summary: string;
  auth: 'admin' | 'app' | 'public' | 'livekit';
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Readonly<Record<number, z.ZodType | null>>;
}>;

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody } as const;

/** Every public route, with the same zod schemas the controllers validate with. */
export const ROUTES: readonly RouteSpec[] = [
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
    summary: 'Rename an app or set its quotas',
    auth: 'admin',
    params: AppParams,
    body: UpdateAppBody,
    responses: { 200: AppView, ...errors },
  },
  {
    method: 'delete',
    path: '/v1/apps/{appId}',
    summary: 'Delete an app, ending its streams',
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
    summary: 'Create a stream (takes a stream slot)',
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
    summary: 'End a stream: removes its LiveKit room and frees the slot',
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
];
