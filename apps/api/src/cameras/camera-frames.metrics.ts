import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { METRICS } from '../metrics/metric-names.js';

/**
 * Frames the cameras connected to this API process sent: published to viewers, or dropped for
 * coming faster than the camera's maxFps. Provided by the cameras module, which counts them; CamerasCollector
 * adds the counter to the registry.
 */
@Injectable()
export class CameraFrameMetrics {
  readonly counter = new Counter({
    name: METRICS.cameraFrames,
    help: 'JPEG frames received from cameras on this API process, by app and outcome (published; dropped: over maxFps)',
    labelNames: ['app', 'outcome'] as const,
    registers: [],
  });

  published(appId: string): void {
    this.counter.inc({ app: appId, outcome: 'published' });
  }

  dropped(appId: string): void {
    this.counter.inc({ app: appId, outcome: 'dropped' });
  }
}
