import { readFileSync, rmSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import { join } from 'node:path';
import { NodeRegistry } from '@tally/nodes';
import { createRedis } from '@tally/config';
import { startAgent } from './agent.js';
import { handOverFile, handOverRequested } from './runtime/hand-over.js';
import { AgentConfigError, loadAgentConfig } from './config.js';
import { agentLogger } from './logger.js';
import { StatfsProbe } from './probe/filesystems.js';
import { LinuxHostProbe } from './probe/host-probe.js';
import { startWorkers } from './runtime/start-workers.js';
import { startStagingWorker } from './staging/staging-worker.js';
import { loadTranscodeConfig } from './transcode/transcode-config.js';
import { startNodeTranscodes } from './transcode/transcode-worker.js';

const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string };

// A stop asked for while the agent is still starting (it is already listed once its first beat is
// sent) is honoured as soon as there is something to stop, instead of killing it half-registered.
let requestedStop: NodeJS.Signals | undefined;
let onStop = (signal: NodeJS.Signals) => {
  requestedStop = signal;
};
process.once('SIGTERM', (signal) => onStop(signal));
process.once('SIGINT', (signal) => onStop(signal));

try {
  const config = loadAgentConfig();
  const transcodeConfig = loadTranscodeConfig();
  const logger = agentLogger(config.logLevel);
  const log = (line: string) => logger.info(line);
  const redis = createRedis(config.redis, { maxRetriesPerRequest: 3 });
  redis.on('error', (error: Error) => logger.error(`redis: ${error.message}`));
  const registry = new NodeRegistry(redis);
  const agent = await startAgent({
    config,
    probe: new LinuxHostProbe({ nvencUnlimitedCap: config.nvencUnlimitedCap }),
    filesystems: new StatfsProbe(),
    registry,
    version,
    log,
  });
  const transcodes = startNodeTranscodes(config, transcodeConfig, log);
  // A node whose egress records stages the files for the origin when it has no shared recordings directory.
  const staging = config.role === 'media' ? undefined : startStagingWorker({ ...config, recordingsDir: config.workers.recordingsDir, log });
  logger.info(`tally agent ${version}: node ${config.nodeId} (${config.role}) heartbeating every ${config.heartbeat.intervalS} s`);
  const subscriber = redis.duplicate();
  // The request to hand over is for this restart only.
  rmSync(handOverFile(config.workers.dir), { force: true });
  const workers = await startWorkers({
    nodeId: config.nodeId,
    config: config.workers,
    redis,
    subscriber,
    log,
  });
  flushCompileCache(); // the installer's NODE_COMPILE_CACHE, else written only at a clean exit

  const leave = (signal: NodeJS.Signals) => {
    if (handOverRequested(config.workers.dir)) {
      handOver(signal);
      return;
    }
    logger.info(`${signal}: leaving the node pool`);
    (workers?.stop() ?? Promise.resolve())
      .catch((error: unknown) => logger.error({ err: error }, 'could not stop every media worker'))
      .then(() => Promise.all([transcodes.close(), staging?.close(), agent.shutdown()]))
      .catch((error: unknown) => logger.error({ err: error }, 'could not remove the heartbeat; it will expire'))
      .finally(() => {
        redis.disconnect();
        subscriber.disconnect();
      });
  };
  // An upgrade (install.sh) asks the agent to hand its workers over rather than stop them: the
  // recordings they run go on, the next agent adopts them and the heartbeat stays (docs/adr).
  const handOver = (signal: NodeJS.Signals) => {
    logger.info(`${signal}: handing the media workers over to the next agent`);
    (workers?.handOver() ?? Promise.resolve())
      .then(() => Promise.all([transcodes.close(), staging?.close(), agent.stop()]))
      .catch((error: unknown) => logger.error({ err: error }, 'could not hand over cleanly'))
      .finally(() => {
        redis.disconnect();
        subscriber.disconnect();
        // The workers it started are still its children, which would keep this process alive.
        process.exit(0);
      });
  };
  onStop = leave;
  if (requestedStop) leave(requestedStop);
} catch (error) {
  console.error(error instanceof AgentConfigError ? error.message : error);
  process.exit(1);
}
