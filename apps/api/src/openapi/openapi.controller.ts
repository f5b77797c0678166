import { Controller, Get } from '@nestjs/common';
import { Public } from '../auth/principal.js';
import { buildOpenApiDocument } from './openapi.document.js';
import { API_VERSION } from './version.js';

@Controller('openapi.json')
@Public()
export class OpenApiController {
  private readonly document = buildOpenApiDocument(API_VERSION);

  @Get()
  get(): Record<string, unknown> {
    return this.document;
  }
}
