import { flushCompileCache } from 'node:module';
import { ConfigError, loadConfig } from '@tally/config';
import { startApi } from './bootstrap.js';

try {
  const config = loadConfig();
  await startApi(config);
  console.log(`tally api listening on http://${config.http.host}:${config.http.port}`);
  flushCompileCache(); // the installer's NODE_COMPILE_CACHE, else written only at a clean exit
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
