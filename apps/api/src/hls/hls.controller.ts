import { Body, Controller, Delete, Get, Param, Post, Res } from '@nestjs/common';
import { ErrorBody, HlsFileParams, HlsView, LimitRefusal, StartHlsBody, StreamParams } from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { Public } from '../routes/access.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { HlsFilesService } from './hls-files.service.js';
import { HlsService } from './hls.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiRoute } from '../routes/api-route.js';

type StreamScope = z.infer<typeof StreamParams>;

@Controller('v1/apps/:appId/streams/:streamId/hls')
export class HlsController {
  constructor(private readonly hls: HlsService) {}

  @Idempotent()
  @ApiRoute({
    summary:
      'Start live HLS of a stream: a segmented egress (track-composite for one publisher, room-composite otherwise), admitted like a recording',
    responses: { 201: HlsView, 409: ErrorBody, 429: LimitRefusal, 503: ErrorBody },
    rateLimit: 'start',
  })
  @Post()
  start(@Param(new ZodPipe(StreamParams)) p: StreamScope, @Body(new ZodPipe(StartHlsBody)) body: StartHlsBody): Promise<HlsView> {
    return this.hls.start(p.appId, p.streamId, body);
  }

  @ApiRoute({
    summary: "The stream's newest HLS session: status, playlist URL, when its segments are deleted",
    responses: { 200: HlsView },
  })
  @Get()
  get(@Param(new ZodPipe(StreamParams)) p: StreamScope): Promise<HlsView> {
    return this.hls.get(p.appId, p.streamId);
  }

  @ApiRoute({
    summary: 'Stop live HLS; the segments stay servable for TALLY_HLS_RETENTION_S, then are deleted',
    responses: { 200: HlsView },
  })
  @Delete()
  stop(@Param(new ZodPipe(StreamParams)) p: StreamScope): Promise<HlsView> {
    return this.hls.stop(p.appId, p.streamId);
  }
}

/**
 * Playlists and segments are public, for players and CDN pull zones, under the session's random
 * public id only: app, stream and room names (which every LiveKit token carries) lead nowhere.
 */
@Controller('hls/:publicId')
export class HlsFilesController {
  constructor(private readonly files: HlsFilesService) {}

  @ApiRoute({
    summary:
      'A playlist (index.m3u8: every segment, live.m3u8: a sliding window; public, max-age of about a segment) or a segment (public, immutable), for players and CDN pull zones',
    responses: { 200: null, 404: ErrorBody },
  })
  @Public()
  @Get(':file')
  file(@Param(new ZodPipe(HlsFileParams)) p: HlsFileParams, @Res() reply: FastifyReply): Promise<void> {
    return this.files.serve(p.publicId, p.file, reply);
  }
}
