import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Config } from '@tally/config';
import { holdStopSignals } from '@tally/runtime';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from './worker.module.js';

/** The worker has no HTTP server: an application context running BullMQ consumers. */
export async function startWorker(config: Config, options: { logger?: false } = {}): Promise<INestApplicationContext> {
  const quiet = options.logger === false;
  // Nest starts the consumers before its shutdown hooks can be enabled: a stop asked meanwhile waits for them.
  const stopSignals = holdStopSignals();
  try {
    const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(quiet ? { ...config, logLevel: 'silent' } : config), {
      ...(quiet ? { logger: false } : { bufferLogs: true }),
      abortOnError: false,
    });
    if (!quiet) app.useLogger(app.get(Logger));
    app.enableShutdownHooks();
    return app;
  } finally {
    stopSignals.release();
  }
}
