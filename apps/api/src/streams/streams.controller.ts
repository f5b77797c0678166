import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import {
  AppParams,
  CreateStreamBody,
  CreateTokenBody,
  type StreamList,
  StreamListQuery,
  StreamParams,
  type StreamToken,
  type StreamView,
} from '@tally/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { StreamsService } from './streams.service.js';
import { TokensService } from './tokens.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';

type AppScope = z.infer<typeof AppParams>;
type StreamScope = z.infer<typeof StreamParams>;

@Controller('v1/apps/:appId/streams')
export class StreamsController {
  constructor(
    private readonly streams: StreamsService,
    private readonly tokens: TokensService,
  ) {}

  @Idempotent()
  @Post()
  create(@Param(new ZodPipe(AppParams)) p: AppScope, @Body(new ZodPipe(CreateStreamBody)) body: CreateStreamBody): Promise<StreamView> {
    return this.streams.create(p.appId, body);
  }

  @Get()
  async list(@Param(new ZodPipe(AppParams)) p: AppScope, @Query(new ZodPipe(StreamListQuery)) q: StreamListQuery): Promise<StreamList> {
    return { items: await this.streams.list(p.appId, q.status) };
  }

  @Get(':streamId')
  get(@Param(new ZodPipe(StreamParams)) p: StreamScope): Promise<StreamView> {
    return this.streams.get(p.appId, p.streamId);
  }

  @Delete(':streamId')
  end(@Param(new ZodPipe(StreamParams)) p: StreamScope): Promise<StreamView> {
    return this.streams.end(p.appId, p.streamId);
  }

  @Post(':streamId/tokens')
  token(@Param(new ZodPipe(StreamParams)) p: StreamScope, @Body(new ZodPipe(CreateTokenBody)) body: CreateTokenBody): Promise<StreamToken> {
    return this.tokens.mint(p.appId, p.streamId, body);
  }
}
