import { Module } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { LivekitIngressClient } from '@tally/livekit';
import { StreamsModule } from '../streams/streams.module.js';
import { IngressesController } from './ingresses.controller.js';
import { IngressesRepository } from './ingresses.repository.js';
import { IngressesService } from './ingresses.service.js';

/** RTMP / WHIP endpoints (LiveKit ingress) publishing into a stream's room. */
@Module({
  imports: [StreamsModule],
  controllers: [IngressesController],
  providers: [
    { provide: LivekitIngressClient, useFactory: (config: Config) => new LivekitIngressClient(config.livekit), inject: [CONFIG] },
    IngressesRepository,
    IngressesService,
  ],
})
export class IngressesModule {}
