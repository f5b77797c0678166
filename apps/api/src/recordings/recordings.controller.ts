import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  AppParams,
  type RecordingList,
  RecordingListQuery,
  RecordingParams,
  type RecordingView,
  StartRecordingBody,
  StreamParams,
} from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { sendStaticFile } from '../common/static-files.js';
import { RecordingFileService } from './recording-file.service.js';
import { RecordingsService } from './recordings.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';

type AppScope = z.infer<typeof AppParams>;
type StreamScope = z.infer<typeof StreamParams>;
type RecordingScope = z.infer<typeof RecordingParams>;

@Controller('v1/apps/:appId')
export class RecordingsController {
  constructor(
    private readonly recordings: RecordingsService,
    private readonly files: RecordingFileService,
  ) {}

  @Idempotent()
  @Post('streams/:streamId/recordings')
  start(
    @Param(new ZodPipe(StreamParams)) p: StreamScope,
    @Body(new ZodPipe(StartRecordingBody)) body: StartRecordingBody,
  ): Promise<RecordingView> {
    return this.recordings.start(p.appId, p.streamId, body);
  }

  @Get('recordings')
  async list(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Query(new ZodPipe(RecordingListQuery)) q: RecordingListQuery,
  ): Promise<RecordingList> {
    return { items: await this.recordings.list(p.appId, q) };
  }

  @Get('recordings/:recordingId')
  get(@Param(new ZodPipe(RecordingParams)) p: RecordingScope): Promise<RecordingView> {
    return this.recordings.get(p.appId, p.recordingId);
  }

  @Post('recordings/:recordingId/stop')
  @HttpCode(200)
  stop(@Param(new ZodPipe(RecordingParams)) p: RecordingScope): Promise<RecordingView> {
    return this.recordings.stop(p.appId, p.recordingId);
  }

  @Get('recordings/:recordingId/file')
  async file(@Param(new ZodPipe(RecordingParams)) p: RecordingScope, @Res() reply: FastifyReply): Promise<void> {
    const file = await this.files.open(p.appId, p.recordingId);
    if (file.kind === 'redirect') await reply.redirect(file.url, 302);
    else await sendStaticFile(reply, file.root, file.file, file.headers);
  }
}
