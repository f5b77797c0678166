import { ConfigError, loadConfig } from '@tally/config';
import { startWorker } from './bootstrap.js';

try {
  await startWorker(loadConfig());
  console.log('tally worker running');
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
