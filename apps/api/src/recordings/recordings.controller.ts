import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  AppParams,
  ErrorBody,
  LimitRefusal,
  RecordingList,
  RecordingListQuery,
  RecordingParams,
  RecordingView,
  StartRecordingBody,
  StreamParams,
} from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { sendStaticFile } from '../common/static-files.js';
import { RecordingFileService } from './recording-file.service.js';
import { RecordingDeletion } from './recording-deletion.service.js';
import { RecordingsService } from './recordings.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiRoute } from '../routes/api-route.js';

type AppScope = z.infer<typeof AppParams>;
type StreamScope = z.infer<typeof StreamParams>;
type RecordingScope = z.infer<typeof RecordingParams>;

@Controller('v1/apps/:appId')
export class RecordingsController {
  constructor(
    private readonly recordings: RecordingsService,
    private readonly files: RecordingFileService,
    private readonly deletion: RecordingDeletion,
  ) {}

  @Idempotent()
  @ApiRoute({
    summary:
      "Start a recording. auto picks passthrough for one publisher with at most one video and one audio track (two Track egresses joined without transcoding; track_composite when the app's recordingFormat is mp4 and the video is not H.264), track for a single audio track, room_composite otherwise or when a layout is asked for; admitted against the app quota and a node budget before LiveKit is called; refused (429 quota_exceeded, resource app.storage, MB) while the app holds its maxStorageMb",
    responses: { 201: RecordingView, 409: ErrorBody, 429: LimitRefusal, 503: ErrorBody },
    rateLimit: 'start',
  })
  @Post('streams/:streamId/recordings')
  start(
    @Param(new ZodPipe(StreamParams)) p: StreamScope,
    @Body(new ZodPipe(StartRecordingBody)) body: StartRecordingBody,
  ): Promise<RecordingView> {
    return this.recordings.start(p.appId, p.streamId, body);
  }

  @ApiRoute({
    summary: "List the app's recordings, newest first",
    responses: { 200: RecordingList },
  })
  @Get('recordings')
  async list(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Query(new ZodPipe(RecordingListQuery)) q: RecordingListQuery,
  ): Promise<RecordingList> {
    return { items: await this.recordings.list(p.appId, q) };
  }

  @ApiRoute({
    summary: 'Get a recording: status, mode and why, duration, size, checksum, codecs, error',
    responses: { 200: RecordingView },
  })
  @Get('recordings/:recordingId')
  get(@Param(new ZodPipe(RecordingParams)) p: RecordingScope): Promise<RecordingView> {
    return this.recordings.get(p.appId, p.recordingId);
  }

  @ApiRoute({
    summary: 'Stop a recording; it turns complete once egress has closed the file and Tally has checked it',
    responses: { 200: RecordingView, 503: ErrorBody },
  })
  @Post('recordings/:recordingId/stop')
  @HttpCode(200)
  stop(@Param(new ZodPipe(RecordingParams)) p: RecordingScope): Promise<RecordingView> {
    return this.recordings.stop(p.appId, p.recordingId);
  }

  @ApiRoute({
    summary:
      'Delete a complete or failed recording: its file, ladder and row (webhook recording.deleted); a running one is a 409 (stop it first); a second delete is a 404',
    responses: { 204: null, 409: ErrorBody },
  })
  @Delete('recordings/:recordingId')
  @HttpCode(204)
  delete(@Param(new ZodPipe(RecordingParams)) p: RecordingScope): Promise<void> {
    return this.deletion.delete(p.appId, p.recordingId);
  }

  @ApiRoute({
    summary: 'Download a complete recording (HTTP range requests supported); on S3 storage, a redirect to a short-lived signed URL',
    responses: { 200: null, 206: null, 302: null, 409: ErrorBody, 416: null },
  })
  @Get('recordings/:recordingId/file')
  async file(@Param(new ZodPipe(RecordingParams)) p: RecordingScope, @Res() reply: FastifyReply): Promise<void> {
    const file = await this.files.open(p.appId, p.recordingId);
    if (file.kind === 'redirect') await reply.redirect(file.url, 302);
    else await sendStaticFile(reply, file.root, file.file, file.headers, 'recording file');
  }
}
