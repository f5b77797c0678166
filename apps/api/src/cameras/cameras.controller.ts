import { Body, Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { Camera } from '@tally/db';
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
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { CameraMjpegService } from './camera-mjpeg.service.js';
import { CameraViewerAccess, ViewedCamera } from './camera-viewer.guard.js';
import { CamerasService } from './cameras.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiRoute } from '../routes/api-route.js';

type AppScope = z.infer<typeof AppParams>;
type CameraScope = z.infer<typeof CameraParams>;

@Controller('v1/apps/:appId/cameras')
export class CamerasController {
  constructor(
    private readonly cameras: CamerasService,
    private readonly mjpeg: CameraMjpegService,
  ) {}

  @Idempotent()
  @ApiRoute({
    summary:
      'Create a ws-mjpeg camera (admitted against app.cameras and its fps × frame size on a node NIC); the ingest key is in this response only',
    responses: { 201: CreatedCamera, 429: LimitRefusal },
  })
  @Post()
  create(@Param(new ZodPipe(AppParams)) p: AppScope, @Body(new ZodPipe(CreateCameraBody)) body: CreateCameraBody): Promise<CreatedCamera> {
    return this.cameras.create(p.appId, body);
  }

  @ApiRoute({
    summary: "List the app's cameras with whether each is connected (no keys)",
    responses: { 200: CameraList },
  })
  @Get()
  async list(@Param(new ZodPipe(AppParams)) p: AppScope): Promise<CameraList> {
    return { items: await this.cameras.list(p.appId) };
  }

  @ApiRoute({
    summary: 'Get a camera: caps, bitrate it is charged for, ingest URL, connected, last frame time',
    responses: { 200: CameraView },
  })
  @Get(':cameraId')
  get(@Param(new ZodPipe(CameraParams)) p: CameraScope): Promise<CameraView> {
    return this.cameras.get(p.appId, p.cameraId);
  }

  @ApiRoute({
    summary: 'Delete a camera: closes its connection (4410) and its viewers, and releases its reservation',
    responses: { 204: null },
  })
  @Delete(':cameraId')
  @HttpCode(204)
  delete(@Param(new ZodPipe(CameraParams)) p: CameraScope): Promise<void> {
    return this.cameras.delete(p.appId, p.cameraId);
  }

  @ApiRoute({
    summary: 'Mint a viewer token for one camera, with its MJPEG, still-frame and WebSocket URLs',
    responses: { 201: CameraToken },
  })
  @Post(':cameraId/tokens')
  token(
    @Param(new ZodPipe(CameraParams)) p: CameraScope,
    @Body(new ZodPipe(CreateCameraTokenBody)) body: CreateCameraTokenBody,
  ): Promise<CameraToken> {
    return this.cameras.token(p.appId, p.cameraId, body.ttlS);
  }

  /** Viewer routes check their own credential: a viewer token, the app's key, or none for public cameras. */
  @ApiRoute({
    summary:
      'Watch a camera as multipart/x-mixed-replace JPEGs (viewer token as Bearer or ?token=, or the app key; none if the app made cameras public); admitted against app.camera_viewers',
    responses: { 200: null, 429: LimitRefusal },
    auth: 'viewer',
  })
  @CameraViewerAccess()
  @Get(':cameraId/mjpeg')
  stream(@Param(new ZodPipe(CameraParams)) _p: CameraScope, @ViewedCamera() camera: Camera, @Res() reply: FastifyReply): Promise<void> {
    return this.mjpeg.stream(camera, reply);
  }

  @ApiRoute({
    summary: "The camera's latest JPEG (same credentials as /mjpeg); 404 until it has sent one",
    responses: { 200: null },
    auth: 'viewer',
  })
  @CameraViewerAccess()
  @Get(':cameraId/frame.jpg')
  frame(@Param(new ZodPipe(CameraParams)) _p: CameraScope, @ViewedCamera() camera: Camera, @Res() reply: FastifyReply): Promise<void> {
    return this.mjpeg.frame(camera, reply);
  }
}
