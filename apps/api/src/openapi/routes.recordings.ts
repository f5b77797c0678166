import {
  AppParams,
  ErrorBody,
  LadderFileParams,
  LimitRefusal,
  RecordingList,
  RecordingListQuery,
  RecordingParams,
  RecordingView,
  StartRecordingBody,
  StreamParams,
} from '@tally/contracts';
import { errors, type RouteSpec } from './route-spec.js';

export const RECORDING_ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/apps/{appId}/streams/{streamId}/recordings',
    idempotent: true,
    summary:
      "Start a recording. auto picks passthrough for one publisher with at most one video and one audio track (two Track egresses joined without transcoding; track_composite when the app's recordingFormat is mp4 and the video is not H.264), track for a single audio track, room_composite otherwise or when a layout is asked for; admitted against the app quota and a node budget before LiveKit is called",
    auth: 'app',
    params: StreamParams,
    body: StartRecordingBody,
    responses: { 201: RecordingView, ...errors, 409: ErrorBody, 429: LimitRefusal, 503: ErrorBody },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/recordings',
    summary: "List the app's recordings, newest first",
    auth: 'app',
    params: AppParams,
    query: RecordingListQuery,
    responses: { 200: RecordingList, ...errors },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/recordings/{recordingId}',
    summary: 'Get a recording: status, mode and why, duration, size, checksum, codecs, error',
    auth: 'app',
    params: RecordingParams,
    responses: { 200: RecordingView, ...errors },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/recordings/{recordingId}/stop',
    summary: 'Stop a recording; it turns complete once egress has closed the file and Tally has checked it',
    auth: 'app',
    params: RecordingParams,
    responses: { 200: RecordingView, ...errors, 503: ErrorBody },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/recordings/{recordingId}/file',
    summary: 'Download a complete recording (HTTP range requests supported); on S3 storage, a redirect to a short-lived signed URL',
    auth: 'app',
    params: RecordingParams,
    responses: { 200: null, 206: null, 302: null, ...errors, 409: ErrorBody, 416: null },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/recordings/{recordingId}/ladder',
    summary:
      'Make a VOD ladder (HLS 1080p/720p/480p/360p, never above the source, plus a master playlist) from a complete recording; admitted on a node with a free NVENC session, else on a CPU; a ladder already queued, running or ready is returned as is. recording.ladder_ready / recording.ladder_failed webhooks follow',
    auth: 'app',
    params: RecordingParams,
    responses: { 202: RecordingView, ...errors, 409: ErrorBody, 429: LimitRefusal },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/recordings/{recordingId}/ladder/{file}',
    summary: "A file of a ready ladder: master.m3u8, a rendition's playlist (application/vnd.apple.mpegurl) or a segment (video/mp2t)",
    auth: 'app',
    params: LadderFileParams,
    responses: { 200: null, ...errors, 409: ErrorBody },
  },
];
