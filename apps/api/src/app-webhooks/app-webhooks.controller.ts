import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  AppParams,
  RotateWebhookSecretBody,
  type WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookDeliveryParams,
  type WebhookDeliveryView,
  type WebhookEndpointView,
  type WebhookSecretView,
} from '@tally/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { AppWebhooksService } from './app-webhooks.service.js';

type AppScope = z.infer<typeof AppParams>;
type DeliveryScope = z.infer<typeof WebhookDeliveryParams>;

/** The app's outbound webhooks: its signing secret and its delivery log. */
@Controller('v1/apps/:appId')
export class AppWebhooksController {
  constructor(private readonly webhooks: AppWebhooksService) {}

  @Post('webhook-secret')
  rotateSecret(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Body(new ZodPipe(RotateWebhookSecretBody)) body: RotateWebhookSecretBody,
  ): Promise<WebhookSecretView> {
    return this.webhooks.rotateSecret(p.appId, body);
  }

  @Get('webhook-endpoint')
  endpoint(@Param(new ZodPipe(AppParams)) p: AppScope): Promise<WebhookEndpointView> {
    return this.webhooks.endpoint(p.appId);
  }

  @Post('webhook-endpoint/enable')
  @HttpCode(200)
  enableEndpoint(@Param(new ZodPipe(AppParams)) p: AppScope): Promise<WebhookEndpointView> {
    return this.webhooks.enableEndpoint(p.appId);
  }

  @Get('webhook-deliveries')
  async list(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Query(new ZodPipe(WebhookDeliveryListQuery)) q: WebhookDeliveryListQuery,
  ): Promise<WebhookDeliveryList> {
    return { items: await this.webhooks.listDeliveries(p.appId, q) };
  }

  @Post('webhook-deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  redeliver(@Param(new ZodPipe(WebhookDeliveryParams)) p: DeliveryScope): Promise<WebhookDeliveryView> {
    return this.webhooks.redeliver(p.appId, p.deliveryId);
  }
}
