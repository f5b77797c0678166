import type { Provider } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { PrismaService } from '@tally/db';
import { CacheInvalidation } from '@tally/runtime';
import { WebhookOutbox } from '@tally/webhooks';
import { StreamLifecycle } from './stream-lifecycle.js';

/** The lifecycles as the API and the worker both provide them, on RuntimeModule's adapters. */
export const STREAM_PROVIDERS: Provider[] = [
  {
    provide: StreamLifecycle,
    useFactory: (prisma: PrismaService, ledger: CapacityLedger, outbox: WebhookOutbox, invalidation: CacheInvalidation) =>
      new StreamLifecycle(prisma, ledger, outbox, invalidation),
    inject: [PrismaService, CapacityLedger, WebhookOutbox, CacheInvalidation],
  },
];
