import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { AppList, AppParams, AppView, CreateAppBody, ErrorBody, UpdateAppBody } from '@tally/contracts';
import { z } from 'zod';
import { CurrentPrincipal, type Principal } from '../tenancy/principal.js';
import { AdminOnly } from '../routes/access.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { AppsService } from './apps.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiRoute } from '../routes/api-route.js';

type Params = z.infer<typeof AppParams>;

@Controller('v1/apps')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Idempotent()
  @ApiRoute({ summary: 'Create an app', responses: { 201: AppView } })
  @Post()
  @AdminOnly()
  create(@Body(new ZodPipe(CreateAppBody)) body: CreateAppBody): Promise<AppView> {
    return this.apps.create(body);
  }

  @ApiRoute({ summary: 'List apps', responses: { 200: AppList } })
  @Get()
  @AdminOnly()
  async list(): Promise<AppList> {
    return { items: await this.apps.list() };
  }

  @ApiRoute({
    summary: 'Get an app with its quotas and usage',
    responses: { 200: AppView },
  })
  @Get(':appId')
  get(@Param(new ZodPipe(AppParams)) params: Params): Promise<AppView> {
    return this.apps.get(params.appId);
  }

  /** The app's own key may set its webhook URL and recording settings; name and quotas need the admin key. */
  @ApiRoute({
    summary:
      "Change an app: name, quota caps and guarantees (admin key only), webhook URL and recording settings (admin or the app's key). " +
      'Caps may sum to more than the pool; guarantees of all apps must fit it together: a guarantee that does not is a 409 whose ' +
      'details name the quota (`quota`, `field`) and the units still free for it (`room`).',
    responses: { 200: AppView, 403: ErrorBody, 409: ErrorBody },
  })
  @Patch(':appId')
  update(
    @Param(new ZodPipe(AppParams)) params: Params,
    @Body(new ZodPipe(UpdateAppBody)) body: UpdateAppBody,
    @CurrentPrincipal() principal: Principal,
  ): Promise<AppView> {
    return this.apps.update(params.appId, body, principal);
  }

  @ApiRoute({
    summary:
      'Delete an app: gone at once (404, keys revoked, webhooks stopped); the next sweep stops everything it runs and releases its reservations; files go after TALLY_APP_RETENTION_S',
    responses: { 204: null },
  })
  @Delete(':appId')
  @AdminOnly()
  @HttpCode(204)
  delete(@Param(new ZodPipe(AppParams)) params: Params): Promise<void> {
    return this.apps.delete(params.appId);
  }
}
