import { Module } from '@nestjs/common';
import { PrismaService } from '@tally/db';
import { UsageCursors, UsageRollup } from '@tally/metering';
import { MeteringSweep } from './metering-sweep.service.js';
import { MeteringSyncRepository } from './metering-sync.repository.js';
import { MeteringProcessor } from './metering.processor.js';

@Module({
  providers: [
    { provide: UsageCursors, useFactory: (prisma: PrismaService) => new UsageCursors(prisma), inject: [PrismaService] },
    { provide: UsageRollup, useFactory: (prisma: PrismaService) => new UsageRollup(prisma), inject: [PrismaService] },
    MeteringSyncRepository,
    MeteringSweep,
    MeteringProcessor,
  ],
})
export class MeteringWorkerModule {}
