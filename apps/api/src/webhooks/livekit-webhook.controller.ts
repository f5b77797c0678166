import { Body, Controller, Headers, HttpCode, Post } from '@nestjs/common';
import { Public } from '../routes/access.js';
import { LivekitWebhookService } from './livekit-webhook.service.js';
import { ApiRoute } from '../routes/api-route.js';

@Controller('webhooks/livekit')
@Public()
export class LivekitWebhookController {
  constructor(private readonly webhooks: LivekitWebhookService) {}

  /** LiveKit posts `application/webhook+json`; the body stays a string so its signature can be checked. */
  @ApiRoute({ summary: 'LiveKit webhook receiver (signed by LiveKit)', responses: { 200: null }, auth: 'livekit' })
  @Post()
  @HttpCode(200)
  async receive(@Body() body: unknown, @Headers('authorization') authorization: string | undefined): Promise<{ ok: true }> {
    await this.webhooks.receive(typeof body === 'string' ? body : JSON.stringify(body ?? null), authorization);
    return { ok: true };
  }
}
