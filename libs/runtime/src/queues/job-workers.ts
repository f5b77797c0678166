import { Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { BullRegistrar, WorkerHost } from '@nestjs/bullmq';
import { assertOneHandlerPerJob } from './job-handler-check.js';
import { jobHandlersOf } from './handles-job.js';

/**
 * The worker process's queue consumers. Before anything runs it checks that each of the worker's
 * jobs has exactly one handler (the process refuses to start otherwise); the `@Processor` workers
 * start only once every module is initialised, and on shutdown they stop taking jobs and finish
 * the ones they hold in `beforeApplicationShutdown`, before Prisma, Redis and the queue producers
 * close in `onApplicationShutdown`.
 */
@Injectable()
export class JobWorkers implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private hosts: WorkerHost[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly registrar: BullRegistrar,
  ) {}

  onModuleInit(): void {
    assertOneHandlerPerJob('worker', this.instances().flatMap(jobHandlersOf));
  }

  onApplicationBootstrap(): void {
    this.registrar.register();
    this.hosts = this.instances().filter((instance): instance is WorkerHost => instance instanceof WorkerHost);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.hosts.map((host) => host.worker.close()));
  }

  private instances(): object[] {
    const instances = this.discovery
      .getProviders()
      .filter((wrapper) => wrapper.isDependencyTreeStatic())
      .map((wrapper): unknown => wrapper.instance);
    return [...new Set(instances.filter((instance): instance is object => typeof instance === 'object' && instance !== null))];
  }
}
