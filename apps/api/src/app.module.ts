import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import type { Config } from '@tally/config';
import { AppWebhooksModule } from './app-webhooks/app-webhooks.module.js';
import { AppsModule } from './apps/apps.module.js';
import { AuthGuard } from './pipeline/auth.guard.js';
import { CamerasModule } from './cameras/cameras.module.js';
import { CapacityModule } from './capacity/capacity.module.js';
import { ClusterModule } from './cluster/cluster.module.js';
import { HttpErrorFilter } from './common/http-error.filter.js';
import { DashboardModule } from './dashboard/dashboard.module.js';
import { HealthModule } from './health/health.module.js';
import { HlsModule } from './hls/hls.module.js';
import { IdempotencyModule } from './idempotency/idempotency.module.js';
import { IngressesModule } from './ingresses/ingresses.module.js';
import { InfraModule } from './infra/infra.module.js';
import { TenancyModule } from './tenancy/tenancy.module.js';
import { KeysModule } from './keys/keys.module.js';
import { MeteringModule } from './metering/metering.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { NodesModule } from './nodes/nodes.module.js';
import { OpenApiController } from './openapi/openapi.controller.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { RecordingsModule } from './recordings/recordings.module.js';
import { StreamsModule } from './streams/streams.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

@Module({})
export class ApiModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        DiscoveryModule,
        InfraModule.forRoot(config),
        TenancyModule,
        CapacityModule,
        NodesModule,
        ClusterModule,
        AppsModule,
        KeysModule,
        StreamsModule,
        RecordingsModule,
        IngressesModule,
        CamerasModule,
        HlsModule,
        MeteringModule,
        WebhooksModule,
        AppWebhooksModule,
        HealthModule,
        DashboardModule,
        MetricsModule,
        IdempotencyModule,
        RateLimitModule,
      ],
      controllers: [OpenApiController],
      providers: [
        AuthGuard,
        // The same instance guards Nest's routes and the routes served straight by Fastify (pipeline/direct-routes.ts).
        { provide: APP_GUARD, useExisting: AuthGuard },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
    };
  }
}
