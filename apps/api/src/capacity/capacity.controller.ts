import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { AppParams, AppUsageView, CapacityCheckBody, CapacityCheckResult, CapacityQuery, CapacityView } from '@tally/contracts';
import type { z } from 'zod';
import { AdminOnly } from '../routes/access.js';
import { DirectRoute } from '../routes/direct-route.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { CapacityService } from './capacity.service.js';
import { ReconcileQueue } from './reconcile.queue.js';
import { ApiRoute } from '../routes/api-route.js';

type AppScope = z.infer<typeof AppParams>;

@Controller('v1')
export class CapacityController {
  constructor(
    private readonly capacity: CapacityService,
    private readonly reconcileQueue: ReconcileQueue,
  ) {}

  @ApiRoute({
    summary:
      'Pool budget, reserved and free per node, how many more of each kind fit, and the guarantees: what they promise of the live ' +
      'pool, what of it is unused, and what is free for work outside guarantees; `?detail=reservations` lists what holds every reservation',
    responses: { 200: CapacityView },
  })
  @Get('capacity')
  @AdminOnly()
  pool(@Query(new ZodPipe(CapacityQuery)) query: CapacityQuery): Promise<CapacityView> {
    return this.capacity.pool(query);
  }

  /** A reconciliation sweep now, instead of at the next interval (after an incident, say). */
  @ApiRoute({
    summary: 'Run a reconciliation sweep now (streams and reservations against LiveKit and live nodes)',
    responses: { 202: null },
  })
  @Post('reconcile')
  @AdminOnly()
  @HttpCode(202)
  async reconcile(): Promise<{ jobId: string }> {
    return { jobId: await this.reconcileQueue.requestSweep() };
  }

  @ApiRoute({
    summary: 'Would this workload be admitted now, and if not, which limit refuses it (reserves nothing)',
    responses: { 200: CapacityCheckResult },
  })
  @DirectRoute()
  @Post('apps/:appId/capacity/check')
  @HttpCode(200)
  check(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Body(new ZodPipe(CapacityCheckBody)) body: CapacityCheckBody,
  ): Promise<CapacityCheckResult> {
    return this.capacity.check(p.appId, body);
  }

  @ApiRoute({
    summary: 'Per quota: units used, the limit (cap) and the guarantee (floor kept free for the app while unused)',
    responses: { 200: AppUsageView },
  })
  @Get('apps/:appId/usage')
  usage(@Param(new ZodPipe(AppParams)) p: AppScope): Promise<AppUsageView> {
    return this.capacity.usage(p.appId);
  }
}
