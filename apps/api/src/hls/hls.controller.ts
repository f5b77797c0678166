import { Body, Controller, Delete, Get, Param, Post, Res } from '@nestjs/common';
import { HlsFileParams, type HlsView, StartHlsBody, StreamParams } from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { Public } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { HlsFilesService } from './hls-files.service.js';
import { HlsService } from './hls.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';

type StreamScope = z.infer<typeof StreamParams>;

@Controller('v1/apps/:appId/streams/:streamId/hls')
export class HlsController {
  constructor(private readonly hls: HlsService) {}

  @Idempotent()
  @Post()
  start(@Param(new ZodPipe(StreamParams)) p: StreamScope, @Body(new ZodPipe(StartHlsBody)) body: StartHlsBody): Promise<HlsView> {
    return this.hls.start(p.appId, p.streamId, body);
  }

  @Get()
  get(@Param(new ZodPipe(StreamParams)) p: StreamScope): Promise<HlsView> {
    return this.hls.get(p.appId, p.streamId);
  }

  @Delete()
  stop(@Param(new ZodPipe(StreamParams)) p: StreamScope): Promise<HlsView> {
    return this.hls.stop(p.appId, p.streamId);
  }
}

/** Playlists and segments are public, for players and CDN pull zones; the ids in the path are unguessable. */
@Controller('hls/:appId/:streamId')
export class HlsFilesController {
  constructor(private readonly files: HlsFilesService) {}

  @Public()
  @Get(':file')
  file(@Param(new ZodPipe(HlsFileParams)) p: HlsFileParams, @Res() reply: FastifyReply): Promise<void> {
    return this.files.serve(p.appId, p.streamId, p.file, reply);
  }
}
