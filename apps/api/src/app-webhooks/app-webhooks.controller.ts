import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  AppParams,
  ErrorBody,
  RotateWebhookSecretBody,
  WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookDeliveryParams,
  WebhookDeliveryView,
  WebhookEndpointView,
  WebhookSecretView,
} from '@tally/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../common/zod.pipe.js';
import { AppWebhooksService } from './app-webhooks.service.js';
import { ApiRoute } from '../routes/api-route.js';

type AppScope = z.infer<typeof AppParams>;
type DeliveryScope = z.infer<typeof WebhookDeliveryParams>;

/** The app's outbound webhooks: its signing secret and its delivery log. */
@Controller('v1/apps/:appId')
export class AppWebhooksController {
  constructor(private readonly webhooks: AppWebhooksService) {}

  @ApiRoute({
    summary:
      "Rotate the app's webhook signing secret (shown once); the previous one keeps signing alongside for gracePeriodS (Standard Webhooks)",
    responses: { 201: WebhookSecretView, 409: ErrorBody },
  })
  @Post('webhook-secret')
  rotateSecret(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Body(new ZodPipe(RotateWebhookSecretBody)) body: RotateWebhookSecretBody,
  ): Promise<WebhookSecretView> {
    return this.webhooks.rotateSecret(p.appId, body);
  }

  @ApiRoute({
    summary: "The app's webhook endpoint: URL, enabled or disabled (and why), failing since, secrets",
    responses: { 200: WebhookEndpointView },
  })
  @Get('webhook-endpoint')
  endpoint(@Param(new ZodPipe(AppParams)) p: AppScope): Promise<WebhookEndpointView> {
    return this.webhooks.endpoint(p.appId);
  }

  @ApiRoute({
    summary: 'Re-enable a disabled webhook endpoint (deliveries are attempted again from now on)',
    responses: { 200: WebhookEndpointView },
  })
  @Post('webhook-endpoint/enable')
  @HttpCode(200)
  enableEndpoint(@Param(new ZodPipe(AppParams)) p: AppScope): Promise<WebhookEndpointView> {
    return this.webhooks.enableEndpoint(p.appId);
  }

  @ApiRoute({
    summary: 'The webhook delivery log, newest first',
    responses: { 200: WebhookDeliveryList },
  })
  @Get('webhook-deliveries')
  async list(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Query(new ZodPipe(WebhookDeliveryListQuery)) q: WebhookDeliveryListQuery,
  ): Promise<WebhookDeliveryList> {
    return { items: await this.webhooks.listDeliveries(p.appId, q) };
  }

  @ApiRoute({
    summary: "Deliver the same event (same id) again, to the app's current webhook URL",
    responses: { 202: WebhookDeliveryView, 409: ErrorBody },
  })
  @Post('webhook-deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  redeliver(@Param(new ZodPipe(WebhookDeliveryParams)) p: DeliveryScope): Promise<WebhookDeliveryView> {
    return this.webhooks.redeliver(p.appId, p.deliveryId);
  }
}
