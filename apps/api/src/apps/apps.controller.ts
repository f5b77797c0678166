import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { AppList, AppParams, type AppView, CreateAppBody, UpdateAppBody } from '@tally/contracts';
import { z } from 'zod';
import { AdminOnly } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { AppsService } from './apps.service.js';

type Params = z.infer<typeof AppParams>;

@Controller('v1/apps')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

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

  @Patch(':appId')
  @AdminOnly()
  update(@Param(new ZodPipe(AppParams)) params: Params, @Body(new ZodPipe(UpdateAppBody)) body: UpdateAppBody): Promise<AppView> {
    return this.apps.update(params.appId, body);
  }

  @Delete(':appId')
  @AdminOnly()
  @HttpCode(204)
  delete(@Param(new ZodPipe(AppParams)) params: Params): Promise<void> {
    return this.apps.delete(params.appId);
  }
}
