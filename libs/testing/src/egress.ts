import { execFile, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  DEFAULT_MODEL,
  EGRESS_PROCESS_ENV,
  egressHostCpus,
  renderEgressServiceConfig,
  type CapacityModel,
  type EgressServiceConfig,
  type LivekitRedisSentinel,
} from '@tally/capacity';
import type { Child } from './child.js';
import type { TestLivekit } from './livekit.js';
import { freePort } from './ports.js';
import { supervise } from './supervised.js';
import { toolPath } from './tools.js';

export type EgressOptions = Readonly<{
  livekit: Pick<TestLivekit, 'wsUrl' | 'apiKey' | 'apiSecret'>;
  redisUrl: string;
  /** The Sentinels to ask for the primary instead of `redisUrl`'s host (docs/adr/0040-redis-sentinel.md). */
  redisSentinel?: LivekitRedisSentinel;
  /** The node's budget as the agent's override variables give it (the stack's TEST_NODE_BUDGET). */
  budget: Readonly<Record<'TALLY_NODE_CPU_MILLICORES' | 'TALLY_NODE_RAM_MB' | 'TALLY_NODE_NIC_MBPS', string>>;
  model?: CapacityModel;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** What the service and its handlers run with beyond where they run: production's by default. */
  processEnv?: Readonly<Record<string, string>>;
}>;

export type TestEgress = Child &
  Readonly<{
    config: EgressServiceConfig;
    healthUrl: string;
    logFile: string;
    /** How often the supervisor brought egress back after it exited on its own. */
    restarts(): number;
    /** Resolves once the current egress process takes requests. */
    ready(): Promise<void>;
  }>;

const READY_TIMEOUT_MS = 30_000;

/**
 * The `egress` binary scripts/provision.sh builds, as a supervised service: its config is derived
 * from the capacity model for the node's budget, and it is restarted whenever it exits on its own
 * (egress v1.8.6 shuts itself down after a handler's internal error and answers nothing more).
 * RoomComposite gets a PulseAudio daemon of its own (Xvfb and Chromium egress starts per job).
 */
export async function startEgress(options: EgressOptions): Promise<TestEgress> {
  const binary = egressBinary();
  const dir = mkdtempSync(join(tmpdir(), 'tally-egress-'));
  const [healthPort, templatePort] = [await freePort(), await freePort()];
  const config = renderEgressServiceConfig({
    apiKey: options.livekit.apiKey,
    apiSecret: options.livekit.apiSecret,
    wsUrl: options.livekit.wsUrl,
    redisUrl: options.redisUrl,
    ...(options.redisSentinel === undefined ? {} : { redisSentinel: options.redisSentinel }),
    healthPort,
    templatePort,
    logLevel: options.logLevel ?? 'info',
    model: options.model ?? DEFAULT_MODEL,
    node: {
      id: 'egress-node',
      cpuMillicores: Number(options.budget.TALLY_NODE_CPU_MILLICORES),
      ramMb: Number(options.budget.TALLY_NODE_RAM_MB),
      nicMbps: Number(options.budget.TALLY_NODE_NIC_MBPS),
      gpus: [],
    },
    hostCpus: egressHostCpus(readIfPresent, availableParallelism()),
    // The test stack runs egress as root, where Chrome refuses its sandbox.
    chromeSandbox: false,
  });
  const configFile = join(dir, 'egress.yaml');
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`); // JSON is YAML
  const logFile = join(dir, 'egress.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  const home = join(dir, 'home');
  const runtimeDir = join(dir, 'run');
  mkdirSync(home);
  mkdirSync(runtimeDir, { mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Egress execs `egress run-handler` for every composite job.
    PATH: `${dirname(binary)}:${process.env['PATH'] ?? ''}`,
    ...(options.processEnv ?? EGRESS_PROCESS_ENV),
    HOME: home,
    XDG_RUNTIME_DIR: runtimeDir,
    TMPDIR: join(dir, 'tmp'),
  };
  mkdirSync(join(dir, 'tmp'));
  // As deploy/workers/egress-entrypoint.sh does: GStreamer's plugin registry is built under HOME
  // before egress is ready, not by the first recording's pipeline (docs/recordings.md).
  await promisify(execFile)('gst-inspect-1.0', ['fakesink'], { env });
  const pulse = startPulse(env, log);
  const healthUrl = `http://127.0.0.1:${healthPort}/`;

  const service = supervise({
    name: 'egress',
    command: () => [binary, ['--config', configFile]],
    cwd: '/',
    env,
    log,
    logFile,
    healthUrl,
    // Listening on the health port comes just before it subscribes to start requests.
    readyMarker: 'service ready',
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  const ready = service.ready;
  // SIGINT: egress stops its recordings and exits (SIGTERM would wait for them to end).
  const stop = async (signal: NodeJS.Signals = 'SIGINT') => {
    await service.stop(signal);
    await pulse.stop();
    log.end();
  };

  try {
    await ready();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    get process() {
      return service.process;
    },
    config,
    healthUrl,
    logFile,
    restarts: service.restarts,
    ready,
    async stop(signal?: NodeJS.Signals) {
      await stop(signal);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function egressBinary(): string {
  // toolPath names the tools it knows; egress lives next to them.
  const path = join(dirname(toolPath('lk')), 'egress');
  if (!existsSync(path)) throw new Error(`${path} is missing: run scripts/provision.sh (npm test does)`);
  return path;
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** PulseAudio for RoomComposite's sound; egress loads one null sink per job into it. */
function startPulse(env: NodeJS.ProcessEnv, log: WriteStream): { stop(): Promise<void> } {
  const child = spawn(
    'pulseaudio',
    [
      ...['--daemonize=no', '--exit-idle-time=-1', '--disallow-exit', '--disable-shm=true'],
      ...['--realtime=false', '--high-priority=false', '--log-level=error', '-n', '--load=module-native-protocol-unix'],
    ],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  child.once('error', (error) => log.write(`[tally-testing] pulseaudio did not start (RoomComposite will fail): ${error.message}\n`));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
