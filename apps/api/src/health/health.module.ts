import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { HealthProbes } from './health.probes.js';
import { HealthService } from './health.service.js';

@Module({ controllers: [HealthController], providers: [HealthProbes, HealthService] })
export class HealthModule {}
