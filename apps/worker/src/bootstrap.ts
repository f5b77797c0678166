import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Config } from '@tally/config';
import { WorkerModule } from './worker.module.js';

/** The worker has no HTTP server: an application context running BullMQ consumers. */
export async function startWorker(config: Config, options: { logger?: false } = {}): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
    logger: options.logger ?? ['error', 'warn', 'log'],
    abortOnError: false,
  });
  app.enableShutdownHooks();
  await app.init();
  return app;
}
