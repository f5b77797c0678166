import {
  AppParams,
  CameraList,
  CameraParams,
  CameraToken,
  CameraView,
  CreateCameraBody,
  CreateCameraTokenBody,
  CreatedCamera,
  LimitRefusal,
} from '@tally/contracts';
import { errors, type RouteSpec } from './route-spec.js';

export const CAMERA_ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/apps/{appId}/cameras',
    idempotent: true,
    summary:
      'Create a ws-mjpeg camera (admitted against app.cameras and its fps × frame size on a node NIC); the ingest key is in this response only',
    auth: 'app',
    params: AppParams,
    body: CreateCameraBody,
    responses: { 201: CreatedCamera, ...errors, 429: LimitRefusal },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/cameras',
    summary: "List the app's cameras with whether each is connected (no keys)",
    auth: 'app',
    params: AppParams,
    responses: { 200: CameraList, ...errors },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/cameras/{cameraId}',
    summary: 'Get a camera: caps, bitrate it is charged for, ingest URL, connected, last frame time',
    auth: 'app',
    params: CameraParams,
    responses: { 200: CameraView, ...errors },
  },
  {
    method: 'delete',
    path: '/v1/apps/{appId}/cameras/{cameraId}',
    summary: 'Delete a camera: closes its connection (4410) and its viewers, and releases its reservation',
    auth: 'app',
    params: CameraParams,
    responses: { 204: null, ...errors },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/cameras/{cameraId}/tokens',
    summary: 'Mint a viewer token for one camera, with its MJPEG, still-frame and WebSocket URLs',
    auth: 'app',
    params: CameraParams,
    body: CreateCameraTokenBody,
    responses: { 201: CameraToken, ...errors },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/cameras/{cameraId}/mjpeg',
    summary:
      'Watch a camera as multipart/x-mixed-replace JPEGs (viewer token as Bearer or ?token=, or the app key; none if the app made cameras public); admitted against app.camera_viewers',
    auth: 'public',
    params: CameraParams,
    responses: { 200: null, ...errors, 429: LimitRefusal },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/cameras/{cameraId}/frame.jpg',
    summary: "The camera's latest JPEG (same credentials as /mjpeg); 404 until it has sent one",
    auth: 'public',
    params: CameraParams,
    responses: { 200: null, ...errors },
  },
];
