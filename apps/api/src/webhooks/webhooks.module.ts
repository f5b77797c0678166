import { Module } from '@nestjs/common';
import { HlsModule } from '../hls/hls.module.js';
import { RecordingsModule } from '../recordings/recordings.module.js';
import { StreamsModule } from '../streams/streams.module.js';
import { LivekitEventsRepository } from './livekit-events.repository.js';
import { LivekitWebhookController } from './livekit-webhook.controller.js';
import { LivekitWebhookService } from './livekit-webhook.service.js';
import { METERING_EVENT_PROVIDERS } from '../metering/metering.module.js';

@Module({
  imports: [StreamsModule, RecordingsModule, HlsModule],
  controllers: [LivekitWebhookController],
  providers: [LivekitWebhookService, LivekitEventsRepository, ...METERING_EVENT_PROVIDERS],
})
export class WebhooksModule {}
