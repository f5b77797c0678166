import { Module } from '@nestjs/common';
import { CamerasModule } from '../cameras/cameras.module.js';
import { StreamsModule } from '../streams/streams.module.js';
import { AppsController } from './apps.controller.js';
import { AppsService } from './apps.service.js';

@Module({
  imports: [StreamsModule, CamerasModule],
  controllers: [AppsController],
  providers: [AppsService],
})
export class AppsModule {}
