import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { AppList, AppParams, type AppView, CreateAppBody, UpdateAppBody } from '@tally/contracts';
import { z } from 'zod';
import { AdminOnly, CurrentPrincipal, type Principal } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { AppsService } from './apps.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';

type Params = z.infer<typeof AppParams>;

@Controller('v1/apps')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Idempotent()
  @Post()
  @AdminOnly()
  create(@Body(new ZodPipe(CreateAppBody)) body: CreateAppBody): Promise<AppView> {
    return this.apps.create(body);
  }

  @Get()
  @AdminOnly()
  async list(): Promise<AppList> {
    return { items: await this.apps.list() };
  }

  @Get(':appId')
  get(@Param(new ZodPipe(AppParams)) params: Params): Promise<AppView> {
    return this.apps.get(params.appId);
  }

  /** The app's own key may set its webhook URL and recording settings; name and quotas need the admin key. */
  @Patch(':appId')
  update(
    @Param(new ZodPipe(AppParams)) params: Params,
    @Body(new ZodPipe(UpdateAppBody)) body: UpdateAppBody,
    @CurrentPrincipal() principal: Principal,
  ): Promise<AppView> {
    return this.apps.update(params.appId, body, principal);
  }

  @Delete(':appId')
  @AdminOnly()
  @HttpCode(204)
  delete(@Param(new ZodPipe(AppParams)) params: Params): Promise<void> {
    return this.apps.delete(params.appId);
  }
}
