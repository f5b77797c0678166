import { Module, type Provider } from '@nestjs/common';
import { PrismaService } from '@tally/db';
import { UsageReader } from '@tally/metering';
import { MetricsRegistryModule } from '../metrics/metrics-registry.module.js';
import { MeteringController } from './metering.controller.js';
import { MeteringEvents } from './metering-events.js';
import { MeteringRepository } from './metering.repository.js';
import { MeteringService } from './metering.service.js';
import { UsageCollector } from './usage.collector.js';
import { USAGE_INTERVALS_PROVIDER } from './usage-intervals.provider.js';

/** What the LiveKit webhook receiver needs to write usage intervals (provided in its module). */
export const METERING_EVENT_PROVIDERS: Provider[] = [USAGE_INTERVALS_PROVIDER, MeteringRepository, MeteringEvents];

@Module({
  imports: [MetricsRegistryModule],
  controllers: [MeteringController],
  providers: [
    { provide: UsageReader, useFactory: (prisma: PrismaService) => new UsageReader(prisma), inject: [PrismaService] },
    MeteringService,
    UsageCollector,
  ],
  exports: [UsageReader],
})
export class MeteringModule {}
