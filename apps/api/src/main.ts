import { ConfigError, loadConfig } from '@tally/config';
import { startApi } from './bootstrap.js';

try {
  const config = loadConfig();
  await startApi(config);
  console.log(`tally api listening on http://${config.http.host}:${config.http.port}`);
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
