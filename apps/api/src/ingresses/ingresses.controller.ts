import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  AppParams,
  CreatedIngress,
  CreateIngressBody,
  ErrorBody,
  IngressList,
  IngressListQuery,
  IngressParams,
  IngressView,
  LimitRefusal,
} from '@tally/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { IngressesService } from './ingresses.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiRoute } from '../routes/api-route.js';

type AppScope = z.infer<typeof AppParams>;
type IngressScope = z.infer<typeof IngressParams>;

@Controller('v1/apps/:appId/ingresses')
export class IngressesController {
  constructor(private readonly ingresses: IngressesService) {}

  @Idempotent()
  @ApiRoute({
    summary:
      "Create an RTMP or WHIP endpoint publishing into a stream's room (admitted against the app quota and a node budget first); the stream key is in this response only",
    responses: { 201: CreatedIngress, 409: ErrorBody, 429: LimitRefusal, 503: ErrorBody },
    rateLimit: 'start',
  })
  @Post()
  create(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Body(new ZodPipe(CreateIngressBody)) body: CreateIngressBody,
  ): Promise<CreatedIngress> {
    return this.ingresses.create(p.appId, body);
  }

  @ApiRoute({
    summary: "List the app's ingresses, newest first (no stream keys)",
    responses: { 200: IngressList },
  })
  @Get()
  async list(@Param(new ZodPipe(AppParams)) p: AppScope, @Query(new ZodPipe(IngressListQuery)) q: IngressListQuery): Promise<IngressList> {
    return { items: await this.ingresses.list(p.appId, q) };
  }

  @ApiRoute({
    summary: 'Get an ingress: kind, URL, status (no stream key)',
    responses: { 200: IngressView },
  })
  @Get(':ingressId')
  get(@Param(new ZodPipe(IngressParams)) p: IngressScope): Promise<IngressView> {
    return this.ingresses.get(p.appId, p.ingressId);
  }

  @ApiRoute({
    summary: 'Delete an ingress: removes it from LiveKit (cutting off a publisher) and releases its reservation',
    responses: { 204: null, 503: ErrorBody },
  })
  @Delete(':ingressId')
  @HttpCode(204)
  delete(@Param(new ZodPipe(IngressParams)) p: IngressScope): Promise<void> {
    return this.ingresses.delete(p.appId, p.ingressId);
  }
}
