import { Global, Module } from '@nestjs/common';
import { Admitter, CapacityLedger, loadCapacityModel } from '@tally/admission';
import type { AppQuotaPolicy } from '@tally/capacity';
import { CONFIG, type Config } from '@tally/config';
import { CacheInvalidation } from '../cache-invalidation.js';
import { cacheOnBus } from '../invalidated-cache.js';
import { AdmissionDecisions } from './admission-decisions.js';
import { AppPoliciesRepository } from './app-policies.repository.js';
import { PoolSourceAdapter } from './pool-source.js';

/**
 * The one Admitter of a Nest process (the API and the worker import this beside RuntimeModule):
 * the capacity model from the profile, the pool read from the node registry, apps' policies read
 * from PostgreSQL and kept in process until the invalidation bus says they changed, and every
 * decision handed to AdmissionDecisions' observers.
 */
@Global()
@Module({
  providers: [
    AppPoliciesRepository,
    PoolSourceAdapter,
    AdmissionDecisions,
    {
      provide: Admitter,
      useFactory: (
        ledger: CapacityLedger,
        pool: PoolSourceAdapter,
        config: Config,
        decisions: AdmissionDecisions,
        invalidation: CacheInvalidation,
      ) => {
        // Every process forgets an app's policy when it changes (AppsService publishes it) or the app is deleted.
        // The TTL is a backstop only: a policy change reaches every process through the bus.
        const policies = cacheOnBus<AppQuotaPolicy>(invalidation, { max: 10_000, ttlMs: 60_000 }, (cache, change) => {
          if (change.kind === 'all') cache.forgetAll();
          else if (change.kind === 'policy' || change.kind === 'app') cache.forget(change.appId);
        });
        const model = loadCapacityModel(config.capacityProfilePath, {
          diskHorizonS: config.diskHorizonS,
          diskWatermarks: config.disk.watermarks,
        });
        return new Admitter(ledger, pool, model, { onDecision: (kind, result) => decisions.emit(kind, result), policies });
      },
      inject: [CapacityLedger, PoolSourceAdapter, CONFIG, AdmissionDecisions, CacheInvalidation],
    },
  ],
  exports: [Admitter, AdmissionDecisions, AppPoliciesRepository, PoolSourceAdapter],
})
export class AdmissionModule {}
