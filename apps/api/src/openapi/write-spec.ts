import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import type { Config } from '@tally/config';
import { ApiModule } from '../app.module.js';
import { controllersOf, routesOf } from './nest-routes.js';
import { buildOpenApiDocument } from './openapi.document.js';
import { API_VERSION } from './version.js';

/** Writes docs/openapi.json from the API module's controllers; a test keeps it equal to what the API serves. */
const routes = routesOf(controllersOf(ApiModule.forRoot({} as Config)));
writeFileSync('docs/openapi.json', `${JSON.stringify(buildOpenApiDocument(API_VERSION, routes), null, 2)}\n`);
