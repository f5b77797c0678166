import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from './openapi.document.js';
import { API_VERSION } from './version.js';

/** Writes docs/openapi.json; a test keeps the committed copy equal to what the code serves. */
writeFileSync('docs/openapi.json', `${JSON.stringify(buildOpenApiDocument(API_VERSION), null, 2)}\n`);
