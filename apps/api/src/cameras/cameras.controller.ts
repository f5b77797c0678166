import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  AppParams,
  type CameraList,
  CameraParams,
  type CameraToken,
  type CameraView,
  CreateCameraBody,
  CreateCameraTokenBody,
  type CreatedCamera,
} from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { Public } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { CameraMjpegService } from './camera-mjpeg.service.js';
import { presentedCredential } from './camera-viewers.service.js';
import { CamerasService } from './cameras.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';

type AppScope = z.infer<typeof AppParams>;
type CameraScope = z.infer<typeof CameraParams>;

@Controller('v1/apps/:appId/cameras')
export class CamerasController {
  constructor(
    private readonly cameras: CamerasService,
    private readonly mjpeg: CameraMjpegService,
  ) {}

  @Idempotent()
  @Post()
  create(@Param(new ZodPipe(AppParams)) p: AppScope, @Body(new ZodPipe(CreateCameraBody)) body: CreateCameraBody): Promise<CreatedCamera> {
    return this.cameras.create(p.appId, body);
  }

  @Get()
  async list(@Param(new ZodPipe(AppParams)) p: AppScope): Promise<CameraList> {
    return { items: await this.cameras.list(p.appId) };
  }

  @Get(':cameraId')
  get(@Param(new ZodPipe(CameraParams)) p: CameraScope): Promise<CameraView> {
    return this.cameras.get(p.appId, p.cameraId);
  }

  @Delete(':cameraId')
  @HttpCode(204)
  delete(@Param(new ZodPipe(CameraParams)) p: CameraScope): Promise<void> {
    return this.cameras.delete(p.appId, p.cameraId);
  }

  @Post(':cameraId/tokens')
  token(
    @Param(new ZodPipe(CameraParams)) p: CameraScope,
    @Body(new ZodPipe(CreateCameraTokenBody)) body: CreateCameraTokenBody,
  ): Promise<CameraToken> {
    return this.cameras.token(p.appId, p.cameraId, body.ttlS);
  }

  /** Viewer routes check their own credential: a viewer token, the app's key, or none for public cameras. */
  @Public()
  @Get(':cameraId/mjpeg')
  stream(
    @Param(new ZodPipe(CameraParams)) p: CameraScope,
    @Headers('authorization') authorization: string | undefined,
    @Query('token') token: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.mjpeg.stream(p.appId, p.cameraId, credentialOf(authorization, token), reply);
  }

  @Public()
  @Get(':cameraId/frame.jpg')
  frame(
    @Param(new ZodPipe(CameraParams)) p: CameraScope,
    @Headers('authorization') authorization: string | undefined,
    @Query('token') token: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.mjpeg.frame(p.appId, p.cameraId, credentialOf(authorization, token), reply);
  }
}

function credentialOf(authorization: string | undefined, token: string | undefined): string | undefined {
  return presentedCredential(authorization, new URLSearchParams(token === undefined ? {} : { token }), 'token');
}
