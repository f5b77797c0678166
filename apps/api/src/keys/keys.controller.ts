import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiKeyList, AppParams, CreatedApiKey, KeyParams } from '@tally/contracts';
import type { z } from 'zod';
import { AdminOnly } from '../routes/access.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { KeysService } from './keys.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ApiRoute } from '../routes/api-route.js';

@Controller('v1/apps/:appId/keys')
@AdminOnly()
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  @Idempotent()
  @ApiRoute({
    summary: 'Create an API key (shown once)',
    responses: { 201: CreatedApiKey },
  })
  @Post()
  create(@Param(new ZodPipe(AppParams)) params: z.infer<typeof AppParams>): Promise<CreatedApiKey> {
    return this.keys.create(params.appId);
  }

  @ApiRoute({
    summary: 'List active API keys (no secrets)',
    responses: { 200: ApiKeyList },
  })
  @Get()
  async list(@Param(new ZodPipe(AppParams)) params: z.infer<typeof AppParams>): Promise<ApiKeyList> {
    return { items: await this.keys.list(params.appId) };
  }

  @ApiRoute({ summary: 'Revoke an API key immediately', responses: { 204: null } })
  @Delete(':keyId')
  @HttpCode(204)
  revoke(@Param(new ZodPipe(KeyParams)) params: z.infer<typeof KeyParams>): Promise<void> {
    return this.keys.revoke(params.appId, params.keyId);
  }
}
