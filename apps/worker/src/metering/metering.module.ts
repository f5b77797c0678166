import { Module } from '@nestjs/common';
import { PrismaService } from '@tally/db';
import { UsageCursors, UsageReader, UsageRollup } from '@tally/metering';
import { MeteringSweep } from './metering-sweep.service.js';
import { MeteringSyncRepository } from './metering-sync.repository.js';
import { MeteringProcessor } from './metering.processor.js';
import { UsageExportSender } from './usage-export.sender.js';
import { UsageExporter } from './usage-exporter.service.js';

@Module({
  providers: [
    { provide: UsageCursors, useFactory: (prisma: PrismaService) => new UsageCursors(prisma), inject: [PrismaService] },
    { provide: UsageRollup, useFactory: (prisma: PrismaService) => new UsageRollup(prisma), inject: [PrismaService] },
    { provide: UsageReader, useFactory: (prisma: PrismaService) => new UsageReader(prisma), inject: [PrismaService] },
    MeteringSyncRepository,
    UsageExportSender,
    UsageExporter,
    MeteringSweep,
    MeteringProcessor,
  ],
})
export class MeteringWorkerModule {}
