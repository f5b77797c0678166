import { Controller, Get, type Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Public } from '../routes/access.js';
import { routesOf } from './nest-routes.js';
import { buildOpenApiDocument } from './openapi.document.js';
import { API_VERSION } from './version.js';

@Controller('openapi.json')
@Public()
export class OpenApiController {
  private document: Record<string, unknown> | undefined;

  constructor(private readonly discovery: DiscoveryService) {}

  /** Built once, on first request, from the controllers this application registered. */
  @Get()
  get(): Record<string, unknown> {
    this.document ??= buildOpenApiDocument(
      API_VERSION,
      routesOf(this.discovery.getControllers().flatMap((wrapper) => (wrapper.metatype ? [wrapper.metatype as Type] : []))),
    );
    return this.document;
  }
}
