import 'reflect-metadata';
import { Controller, Get, Module, Param, Post, Body } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError } from '../common/domain-error.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { Public } from '../routes/access.js';
import { DirectRoute } from '../routes/direct-route.js';
import { type DirectGuard, registerDirectRoutes } from './direct-routes.js';

const Params = z.object({ id: z.string().min(3) });
const CreateBody = z.object({ name: z.string() });

/** A controller no list names: discovery alone must find its direct routes. */
@Controller('v1/probes')
class ProbeController {
  @Get(':id')
  @DirectRoute()
  read(@Param(new ZodPipe(Params)) params: z.infer<typeof Params>) {
    return { id: params.id, servedBy: 'probe' };
  }

  @Post()
  @Public()
  @DirectRoute()
  create(@Body(new ZodPipe(CreateBody)) body: z.infer<typeof CreateBody>) {
    return { name: body.name };
  }

  @Get()
  list() {
    return { via: 'nest' };
  }
}

@Module({ imports: [DiscoveryModule], controllers: [ProbeController] })
class ProbeModule {}

describe(registerDirectRoutes.name, () => {
  let app: NestFastifyApplication | undefined;
  afterEach(async () => app?.close());

  async function start(guard: DirectGuard) {
    const adapter = new FastifyAdapter();
    app = await NestFactory.create<NestFastifyApplication>(ProbeModule, adapter, { logger: false });
    registerDirectRoutes(adapter.getInstance(), app.get(DiscoveryService), guard);
    await app.init();
    return adapter.getInstance();
  }

  it('serves the direct routes of a controller it was never told about, through the guard with each route’s access', async () => {
    const seen: string[] = [];
    const sut = await start({
      authorize: (request, access) => {
        seen.push(`${request.method} ${access}`);
        return Promise.resolve();
      },
    });

    const read = await sut.inject({ method: 'GET', url: '/v1/probes/abc' });
    const created = await sut.inject({ method: 'POST', url: '/v1/probes', payload: { name: 'cam' } });
    const listed = await sut.inject({ method: 'GET', url: '/v1/probes' });

    expect([read.statusCode, read.json()]).toEqual([200, { id: 'abc', servedBy: 'probe' }]);
    expect([created.statusCode, created.json()]).toEqual([201, { name: 'cam' }]);
    expect(listed.json()).toEqual({ via: 'nest' });
    // Only the direct routes call the guard here (the test module has no global Nest guard).
    expect(seen).toEqual(['GET app', 'POST public']);
  });

  it('answers the guard’s refusal and a bad parameter as the error filter would', async () => {
    const sut = await start({
      authorize: (request) =>
        request.headers.authorization === undefined
          ? Promise.reject(new DomainError('unauthorized', 'missing bearer token'))
          : Promise.resolve(),
    });

    const refused = await sut.inject({ method: 'GET', url: '/v1/probes/abc' });
    const invalid = await sut.inject({ method: 'GET', url: '/v1/probes/ab', headers: { authorization: 'Bearer x' } });

    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ error: { code: 'unauthorized' } });
    expect(invalid.statusCode).toBe(400);
    expect(JSON.stringify(invalid.json())).toContain('id');
  });
});
