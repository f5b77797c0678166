import { Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { LadderFileParams, RecordingParams, type RecordingView } from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { sendStaticFile } from '../common/static-files.js';
import { LadderService } from './ladder.service.js';

type RecordingScope = z.infer<typeof RecordingParams>;
type LadderFileScope = z.infer<typeof LadderFileParams>;

@Controller('v1/apps/:appId/recordings/:recordingId/ladder')
export class LadderController {
  constructor(private readonly ladders: LadderService) {}

  @Post()
  @HttpCode(202)
  request(@Param(new ZodPipe(RecordingParams)) p: RecordingScope): Promise<RecordingView> {
    return this.ladders.request(p.appId, p.recordingId);
  }

  @Get(':file')
  async file(@Param(new ZodPipe(LadderFileParams)) p: LadderFileScope, @Res() reply: FastifyReply): Promise<void> {
    const file = await this.ladders.open(p.appId, p.recordingId, p.file);
    await sendStaticFile(reply, file.root, file.file, file.headers);
  }
}
