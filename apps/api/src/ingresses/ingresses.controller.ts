import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  AppParams,
  type CreatedIngress,
  CreateIngressBody,
  type IngressList,
  IngressListQuery,
  IngressParams,
  type IngressView,
} from '@tally/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { IngressesService } from './ingresses.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';

type AppScope = z.infer<typeof AppParams>;
type IngressScope = z.infer<typeof IngressParams>;

@Controller('v1/apps/:appId/ingresses')
export class IngressesController {
  constructor(private readonly ingresses: IngressesService) {}

  @Idempotent()
  @Post()
  create(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Body(new ZodPipe(CreateIngressBody)) body: CreateIngressBody,
  ): Promise<CreatedIngress> {
    return this.ingresses.create(p.appId, body);
  }

  @Get()
  async list(@Param(new ZodPipe(AppParams)) p: AppScope, @Query(new ZodPipe(IngressListQuery)) q: IngressListQuery): Promise<IngressList> {
    return { items: await this.ingresses.list(p.appId, q) };
  }

  @Get(':ingressId')
  get(@Param(new ZodPipe(IngressParams)) p: IngressScope): Promise<IngressView> {
    return this.ingresses.get(p.appId, p.ingressId);
  }

  @Delete(':ingressId')
  @HttpCode(204)
  delete(@Param(new ZodPipe(IngressParams)) p: IngressScope): Promise<void> {
    return this.ingresses.delete(p.appId, p.ingressId);
  }
}
