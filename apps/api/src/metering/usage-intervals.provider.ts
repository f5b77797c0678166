import type { Provider } from '@nestjs/common';
import { PrismaService } from '@tally/db';
import { UsageIntervals } from '@tally/metering';

/** The writer of usage intervals, for the features that meter what they run (docs/adr/0028-usage-metering.md). */
export const USAGE_INTERVALS_PROVIDER: Provider = {
  provide: UsageIntervals,
  useFactory: (prisma: PrismaService) => new UsageIntervals(prisma),
  inject: [PrismaService],
};
