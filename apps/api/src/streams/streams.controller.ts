import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import {
  AppParams,
  CreateStreamBody,
  CreateTokenBody,
  ErrorBody,
  LimitRefusal,
  StreamList,
  StreamListQuery,
  StreamParams,
  StreamToken,
  StreamView,
} from '@tally/contracts';
import type { z } from 'zod';
import { DirectRoute } from '../routes/direct-route.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { StreamsService } from './streams.service.js';
import { TokensService } from './tokens.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiRoute } from '../routes/api-route.js';

type AppScope = z.infer<typeof AppParams>;
type StreamScope = z.infer<typeof StreamParams>;

@Controller('v1/apps/:appId/streams')
export class StreamsController {
  constructor(
    private readonly streams: StreamsService,
    private readonly tokens: TokensService,
  ) {}

  @Idempotent()
  @ApiRoute({
    summary:
      "Create a stream (admitted against the app's cap, other apps' unused guarantees and a node budget first). A 429 names the " +
      'resource: `app.streams` (the cap), `pool.guaranteed` (the rest of the pool is guaranteed to other apps; `heldResource` says ' +
      'which node resource), or `node.ram` / `node.cpu` / `node.nic`.',
    responses: { 201: StreamView, 429: LimitRefusal, 503: ErrorBody },
  })
  @DirectRoute()
  @Post()
  create(@Param(new ZodPipe(AppParams)) p: AppScope, @Body(new ZodPipe(CreateStreamBody)) body: CreateStreamBody): Promise<StreamView> {
    return this.streams.create(p.appId, body);
  }

  @ApiRoute({ summary: 'List streams', responses: { 200: StreamList } })
  @Get()
  async list(@Param(new ZodPipe(AppParams)) p: AppScope, @Query(new ZodPipe(StreamListQuery)) q: StreamListQuery): Promise<StreamList> {
    return { items: await this.streams.list(p.appId, q.status) };
  }

  @ApiRoute({ summary: 'Get a stream', responses: { 200: StreamView } })
  @Get(':streamId')
  get(@Param(new ZodPipe(StreamParams)) p: StreamScope): Promise<StreamView> {
    return this.streams.get(p.appId, p.streamId);
  }

  @ApiRoute({
    summary:
      "End a stream: marks it ended and releases its reservation, then removes its LiveKit room (disconnecting everyone); a room LiveKit could not remove then is removed by the worker's sweep",
    responses: { 200: StreamView },
  })
  @Delete(':streamId')
  end(@Param(new ZodPipe(StreamParams)) p: StreamScope): Promise<StreamView> {
    return this.streams.end(p.appId, p.streamId);
  }

  @ApiRoute({
    summary:
      "Mint a LiveKit join token for this stream (the first one, or an ingress, recording or HLS session before it, creates the stream's LiveKit room; 503 when LiveKit could not create it); 409 once the stream has ended, or when it ends while its room is being created",
    responses: { 201: StreamToken, 409: ErrorBody, 503: ErrorBody },
  })
  @DirectRoute()
  @Post(':streamId/tokens')
  token(@Param(new ZodPipe(StreamParams)) p: StreamScope, @Body(new ZodPipe(CreateTokenBody)) body: CreateTokenBody): Promise<StreamToken> {
    return this.tokens.mint(p.appId, p.streamId, body);
  }
}
