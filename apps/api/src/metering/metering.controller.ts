import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { AllAppsMeteringQuery, AllAppsMeteringView, AppParams, AppMeteringView, MeteringQuery } from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { AdminOnly } from '../routes/access.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { ApiRoute } from '../routes/api-route.js';
import { allAppsUsageCsv, appUsageCsv } from './metering-csv.js';
import { MeteringService } from './metering.service.js';

type Params = z.infer<typeof AppParams>;

/** `Accept: text/csv` asks for CSV; anything else gets JSON. */
function wantsCsv(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/csv/i.test(accept);
}

@Controller('v1')
export class MeteringController {
  constructor(private readonly metering: MeteringService) {}

  @ApiRoute({
    summary:
      "An app's usage in [from, to): totals and hour or day buckets (participant, stream, recording by mode, ingress, live HLS minutes; storage GB-hours). Accept: text/csv gives one CSV row per bucket",
    responses: { 200: AppMeteringView },
  })
  @Get('apps/:appId/metering')
  async ofApp(
    @Param(new ZodPipe(AppParams)) p: Params,
    @Query(new ZodPipe(MeteringQuery)) query: MeteringQuery,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AppMeteringView | string> {
    const view = await this.metering.ofApp(p.appId, query);
    if (!wantsCsv(accept)) return view;
    void reply.type('text/csv; charset=utf-8');
    return appUsageCsv(view);
  }

  @ApiRoute({
    summary: "Every app's usage in [from, to) with the totals over all apps (admin). Accept: text/csv gives one CSV row per app",
    responses: { 200: AllAppsMeteringView },
  })
  @Get('metering')
  @AdminOnly()
  async ofAllApps(
    @Query(new ZodPipe(AllAppsMeteringQuery)) query: AllAppsMeteringQuery,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AllAppsMeteringView | string> {
    const view = await this.metering.ofAllApps(query);
    if (!wantsCsv(accept)) return view;
    void reply.type('text/csv; charset=utf-8');
    return allAppsUsageCsv(view);
  }
}
