import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  AppParams,
  type AppUsageView,
  CapacityCheckBody,
  type CapacityCheckResult,
  CapacityQuery,
  type CapacityView,
} from '@tally/contracts';
import type { z } from 'zod';
import { AdminOnly } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { CapacityService } from './capacity.service.js';
import { ReconcileQueue } from './reconcile.queue.js';

type AppScope = z.infer<typeof AppParams>;

@Controller('v1')
export class CapacityController {
  constructor(
    private readonly capacity: CapacityService,
    private readonly reconcileQueue: ReconcileQueue,
  ) {}

  @Get('capacity')
  @AdminOnly()
  pool(@Query(new ZodPipe(CapacityQuery)) query: CapacityQuery): Promise<CapacityView> {
    return this.capacity.pool(query);
  }

  /** A reconciliation sweep now, instead of at the next interval (after an incident, say). */
  @Post('reconcile')
  @AdminOnly()
  @HttpCode(202)
  async reconcile(): Promise<{ jobId: string }> {
    return { jobId: await this.reconcileQueue.requestSweep() };
  }

  @Post('apps/:appId/capacity/check')
  @HttpCode(200)
  check(
    @Param(new ZodPipe(AppParams)) p: AppScope,
    @Body(new ZodPipe(CapacityCheckBody)) body: CapacityCheckBody,
  ): Promise<CapacityCheckResult> {
    return this.capacity.check(p.appId, body);
  }

  @Get('apps/:appId/usage')
  usage(@Param(new ZodPipe(AppParams)) p: AppScope): Promise<AppUsageView> {
    return this.capacity.usage(p.appId);
  }
}
