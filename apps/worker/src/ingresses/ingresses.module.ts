import { Module } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { LivekitIngressClient } from '@tally/livekit';
import { IngressReconciler } from './ingress-reconciler.service.js';
import { IngressesRepository } from './ingresses.repository.js';

/** The ingress side of reconciliation. */
@Module({
  providers: [
    { provide: LivekitIngressClient, useFactory: (config: Config) => new LivekitIngressClient(config.livekit), inject: [CONFIG] },
    IngressesRepository,
    IngressReconciler,
  ],
  exports: [IngressReconciler, LivekitIngressClient],
})
export class IngressesWorkerModule {}
