import { Module } from '@nestjs/common';
import { StreamCache } from './stream-cache.js';
import { StreamRooms } from './stream-rooms.js';
import { StreamPresenceService } from './stream-presence.service.js';
import { StreamsController } from './streams.controller.js';
import { StreamsRepository } from './streams.repository.js';
import { StreamsService } from './streams.service.js';
import { TokensService } from './tokens.service.js';

@Module({
  controllers: [StreamsController],
  providers: [StreamsRepository, StreamRooms, StreamsService, StreamPresenceService, StreamCache, TokensService],
  exports: [StreamsService, StreamPresenceService],
})
export class StreamsModule {}
