import { Module } from '@nestjs/common';
import { DashboardController } from './dashboard.controller.js';
import { DASHBOARD_DIR, DashboardFiles, DEFAULT_DASHBOARD_DIR } from './dashboard-files.js';

/** Serves apps/dashboard's build at /dashboard (503 naming the build command while it is missing). */
@Module({
  controllers: [DashboardController],
  providers: [DashboardFiles, { provide: DASHBOARD_DIR, useValue: DEFAULT_DASHBOARD_DIR }],
})
export class DashboardModule {}
