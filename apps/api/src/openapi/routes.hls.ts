import { ErrorBody, HlsFileParams, HlsView, LimitRefusal, StartHlsBody, StreamParams } from '@tally/contracts';
import { errors, type RouteSpec } from './route-spec.js';

export const HLS_ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/apps/{appId}/streams/{streamId}/hls',
    idempotent: true,
    summary:
      'Start live HLS of a stream: a segmented egress (track-composite for one publisher, room-composite otherwise), admitted like a recording',
    auth: 'app',
    params: StreamParams,
    body: StartHlsBody,
    responses: { 201: HlsView, ...errors, 409: ErrorBody, 429: LimitRefusal, 503: ErrorBody },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/streams/{streamId}/hls',
    summary: "The stream's newest HLS session: status, playlist URL, when its segments are deleted",
    auth: 'app',
    params: StreamParams,
    responses: { 200: HlsView, ...errors },
  },
  {
    method: 'delete',
    path: '/v1/apps/{appId}/streams/{streamId}/hls',
    summary: 'Stop live HLS; the segments stay servable for TALLY_HLS_RETENTION_S, then are deleted',
    auth: 'app',
    params: StreamParams,
    responses: { 200: HlsView, ...errors },
  },
  {
    method: 'get',
    path: '/hls/{appId}/{streamId}/{file}',
    summary:
      'A playlist (index.m3u8: every segment, live.m3u8: a sliding window; public, max-age of about a segment) or a segment (public, immutable), for players and CDN pull zones',
    auth: 'public',
    params: HlsFileParams,
    responses: { 200: null, 400: ErrorBody, 404: ErrorBody },
  },
];
