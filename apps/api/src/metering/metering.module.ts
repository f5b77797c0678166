import { Module } from '@nestjs/common';
import { PrismaService } from '@tally/db';
import { UsageIntervals, UsageReader } from '@tally/metering';
import { MeteringController } from './metering.controller.js';
import { MeteringEvents } from './metering-events.js';
import { MeteringRepository } from './metering.repository.js';
import { MeteringService } from './metering.service.js';

@Module({
  controllers: [MeteringController],
  providers: [
    { provide: UsageIntervals, useFactory: (prisma: PrismaService) => new UsageIntervals(prisma), inject: [PrismaService] },
    { provide: UsageReader, useFactory: (prisma: PrismaService) => new UsageReader(prisma), inject: [PrismaService] },
    MeteringRepository,
    MeteringEvents,
    MeteringService,
  ],
  exports: [MeteringEvents, UsageReader],
})
export class MeteringModule {}
