import { Module } from '@nestjs/common';
import { MetricsRegistryModule } from '../metrics/metrics-registry.module.js';
import { USAGE_INTERVALS_PROVIDER } from '../metering/usage-intervals.provider.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { CameraFrameMetrics } from './camera-frames.metrics.js';
import { CamerasCollector } from './cameras.collector.js';
import { CameraFeedHub } from './camera-feed-hub.js';
import { CameraMjpegService } from './camera-mjpeg.service.js';
import { CameraPresence } from './camera-presence.js';
import { CameraSockets } from './camera-sockets.js';
import { CameraUsage } from './camera-usage.js';
import { CameraViewerPresence } from './camera-viewer-presence.js';
import { CameraViewerTokens } from './camera-viewer-tokens.js';
import { CameraViewersService } from './camera-viewers.service.js';
import { CamerasController } from './cameras.controller.js';
import { CamerasRepository } from './cameras.repository.js';
import { CamerasService } from './cameras.service.js';

/** ws-mjpeg cameras: WebSocket ingest, MJPEG / WebSocket / still viewers, admitted per camera and per viewer. */
@Module({
  imports: [RateLimitModule, MetricsRegistryModule],
  controllers: [CamerasController],
  providers: [
    CamerasRepository,
    CamerasService,
    CameraFeedHub,
    USAGE_INTERVALS_PROVIDER,
    CameraUsage,
    CameraPresence,
    CameraViewerPresence,
    CameraFrameMetrics,
    CamerasCollector,
    CameraViewerTokens,
    CameraViewersService,
    CameraMjpegService,
    CameraSockets,
  ],
  exports: [CamerasService],
})
export class CamerasModule {}
