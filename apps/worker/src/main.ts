import { flushCompileCache } from 'node:module';
import { ConfigError, loadConfig } from '@tally/config';
import { JobHandlerError } from '@tally/runtime';
import { startWorker } from './bootstrap.js';

try {
  await startWorker(loadConfig());
  console.log('tally worker running');
  flushCompileCache(); // the installer's NODE_COMPILE_CACHE, else written only at a clean exit
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof JobHandlerError ? error.message : error);
  process.exit(1);
}
