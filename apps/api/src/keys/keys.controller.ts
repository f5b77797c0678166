import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { AppParams, type ApiKeyList, type CreatedApiKey, KeyParams } from '@tally/contracts';
import type { z } from 'zod';
import { AdminOnly } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { KeysService } from './keys.service.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';

@Controller('v1/apps/:appId/keys')
@AdminOnly()
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  @Idempotent()
  @Post()
  create(@Param(new ZodPipe(AppParams)) params: z.infer<typeof AppParams>): Promise<CreatedApiKey> {
    return this.keys.create(params.appId);
  }

  @Get()
  async list(@Param(new ZodPipe(AppParams)) params: z.infer<typeof AppParams>): Promise<ApiKeyList> {
    return { items: await this.keys.list(params.appId) };
  }

  @Delete(':keyId')
  @HttpCode(204)
  revoke(@Param(new ZodPipe(KeyParams)) params: z.infer<typeof KeyParams>): Promise<void> {
    return this.keys.revoke(params.appId, params.keyId);
  }
}
