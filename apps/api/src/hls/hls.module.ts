import { Module } from '@nestjs/common';
import { USAGE_INTERVALS_PROVIDER } from '../metering/usage-intervals.provider.js';
import { StreamsModule } from '../streams/streams.module.js';
import { HlsBytesMeter } from './hls-bytes-meter.js';
import { HlsFilesService } from './hls-files.service.js';
import { HlsController, HlsFilesController } from './hls.controller.js';
import { HlsRepository } from './hls.repository.js';
import { HlsService } from './hls.service.js';

/** Live HLS of a stream: a segmented egress, its files served for CDNs, deleted after a retention period. */
@Module({
  imports: [StreamsModule],
  controllers: [HlsController, HlsFilesController],
  providers: [HlsRepository, HlsService, HlsFilesService, USAGE_INTERVALS_PROVIDER, HlsBytesMeter],
  exports: [HlsRepository],
})
export class HlsModule {}
