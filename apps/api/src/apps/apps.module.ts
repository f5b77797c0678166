import { Module } from '@nestjs/common';
import { StreamsModule } from '../streams/streams.module.js';
import { AppsController } from './apps.controller.js';
import { AppsService } from './apps.service.js';

@Module({
  imports: [StreamsModule],
  controllers: [AppsController],
  providers: [AppsService],
})
export class AppsModule {}
