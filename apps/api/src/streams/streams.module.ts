import { Module } from '@nestjs/common';
import { STREAM_LIFECYCLES, STREAM_PROVIDERS } from '@tally/streams';
import { StreamCache } from './stream-cache.js';
import { StreamRooms } from './stream-rooms.js';
import { StreamPresenceService } from './stream-presence.service.js';
import { StreamsController } from './streams.controller.js';
import { StreamsRepository } from './streams.repository.js';
import { StreamsService } from './streams.service.js';
import { TokensService } from './tokens.service.js';

@Module({
  controllers: [StreamsController],
  providers: [...STREAM_PROVIDERS, StreamsRepository, StreamRooms, StreamsService, StreamPresenceService, StreamCache, TokensService],
  exports: [StreamsService, StreamPresenceService, ...STREAM_LIFECYCLES],
})
export class StreamsModule {}
