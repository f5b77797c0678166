import { Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ErrorBody, LadderFileParams, LimitRefusal, RecordingParams, RecordingView } from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { sendStaticFile } from '../common/static-files.js';
import { LadderService } from './ladder.service.js';
import { ApiRoute } from '../routes/api-route.js';

type RecordingScope = z.infer<typeof RecordingParams>;
type LadderFileScope = z.infer<typeof LadderFileParams>;

@Controller('v1/apps/:appId/recordings/:recordingId/ladder')
export class LadderController {
  constructor(private readonly ladders: LadderService) {}

  @ApiRoute({
    summary:
      'Make a VOD ladder (HLS 1080p/720p/480p/360p, never above the source, plus a master playlist) from a complete recording; admitted on a node with a free NVENC session, else on a CPU; a ladder already queued, running or ready is returned as is. recording.ladder_ready / recording.ladder_failed webhooks follow',
    responses: { 202: RecordingView, 409: ErrorBody, 429: LimitRefusal },
  })
  @Post()
  @HttpCode(202)
  request(@Param(new ZodPipe(RecordingParams)) p: RecordingScope): Promise<RecordingView> {
    return this.ladders.request(p.appId, p.recordingId);
  }

  @ApiRoute({
    summary: "A file of a ready ladder: master.m3u8, a rendition's playlist (application/vnd.apple.mpegurl) or a segment (video/mp2t)",
    responses: { 200: null, 409: ErrorBody },
  })
  @Get(':file')
  async file(@Param(new ZodPipe(LadderFileParams)) p: LadderFileScope, @Res() reply: FastifyReply): Promise<void> {
    const file = await this.ladders.open(p.appId, p.recordingId, p.file);
    await sendStaticFile(reply, file.root, file.file, file.headers, 'ladder file');
  }
}
