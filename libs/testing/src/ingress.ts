import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { renderIngressServiceConfig, type IngressServiceConfig } from '@tally/capacity';
import type { Child } from './child.js';
import type { TestLivekit, TurnServer } from './livekit.js';
import { freePort } from './ports.js';
import { supervise } from './supervised.js';
import { toolPath } from './tools.js';

/** The ports clients push to; livekit-server needs them too, for the URLs CreateIngress returns. */
export type IngressPorts = Readonly<{ rtmpPort: number; whipPort: number }>;

export type IngressOptions = Readonly<{
  livekit: Pick<TestLivekit, 'wsUrl' | 'apiKey' | 'apiSecret' | 'nodeIp'>;
  redisUrl: string;
  /** The ports livekit-server's `ingress:` section announces (see ingressPorts()). */
  ports: IngressPorts;
  /** The TURN over TLS server WHIP publishers are handed (Link headers), as the agent configures it. */
  turn?: TurnServer;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}>;

export type TestIngress = Child &
  Readonly<{
    config: IngressServiceConfig;
    healthUrl: string;
    logFile: string;
    /** How often the supervisor brought ingress back after it exited on its own. */
    restarts(): number;
    /** Resolves once the current ingress process takes requests. */
    ready(): Promise<void>;
  }>;

const READY_TIMEOUT_MS = 30_000;

/** Free ports for a stack's ingress, chosen before livekit-server starts (its config names them). */
export async function ingressPorts(): Promise<IngressPorts> {
  return { rtmpPort: await freePort(), whipPort: await freePort() };
}

/**
 * The `ingress` binary scripts/provision.sh builds, as a supervised service (restarted whenever it
 * exits on its own). It starts one `ingress run-handler` per session, in its process group.
 */
export async function startIngress(options: IngressOptions): Promise<TestIngress> {
  const binary = ingressBinary();
  const dir = mkdtempSync(join(tmpdir(), 'tally-ingress-'));
  const [healthPort, relayPort, udpPort] = [await freePort(), await freePort(), await freePort()];
  const config = renderIngressServiceConfig({
    apiKey: options.livekit.apiKey,
    apiSecret: options.livekit.apiSecret,
    wsUrl: options.livekit.wsUrl,
    redisUrl: options.redisUrl,
    healthPort,
    rtmpPort: options.ports.rtmpPort,
    whipPort: options.ports.whipPort,
    httpRelayPort: relayPort,
    udpPort,
    nodeIp: options.livekit.nodeIp,
    ...(options.turn === undefined ? {} : { turnServers: [options.turn] }),
    logLevel: options.logLevel ?? 'info',
  });
  const configFile = join(dir, 'ingress.yaml');
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`); // JSON is YAML
  const logFile = join(dir, 'ingress.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  mkdirSync(join(dir, 'tmp'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Ingress execs `ingress run-handler` for every session.
    PATH: `${dirname(binary)}:${process.env['PATH'] ?? ''}`,
    GST_DEBUG: '1',
    TMPDIR: join(dir, 'tmp'),
  };
  const healthUrl = `http://127.0.0.1:${healthPort}/`;

  const service = supervise({
    name: 'ingress',
    command: () => [binary, ['--config', configFile]],
    cwd: dir,
    env,
    log,
    logFile,
    healthUrl,
    // The health port opens before the CPU monitor starts; until then every session is refused.
    readyMarker: 'available CPU cores',
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  const ready = service.ready;
  // SIGINT: ingress kills its sessions and exits (SIGTERM would wait for publishers to leave).
  const stop = async (signal: NodeJS.Signals = 'SIGINT') => {
    await service.stop(signal);
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

/** ffmpeg pushing a generated test card and a 440 Hz tone over RTMP, in real time (x264 baseline + AAC in FLV). */
export function pushRtmp(url: string, seconds = 120): ChildProcess {
  return spawn(
    'ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-re'],
      ...['-f', 'lavfi', '-i', `testsrc=size=640x360:rate=25:duration=${seconds}`],
      ...['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`],
      ...['-c:v', 'libx264', '-profile:v', 'baseline', '-pix_fmt', 'yuv420p', '-preset', 'veryfast', '-tune', 'zerolatency'],
      ...['-g', '50', '-b:v', '800k', '-c:a', 'aac', '-b:a', '96k', '-ar', '48000', '-ac', '2'],
      ...['-f', 'flv', url],
    ],
    { stdio: 'ignore' },
  );
}

/** Stops a push started by pushRtmp (the publisher leaves; ingress ends the session). */
export async function stopPush(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function ingressBinary(): string {
  // toolPath names the tools it knows; ingress lives next to them.
  const path = join(dirname(toolPath('lk')), 'ingress');
  if (!existsSync(path)) throw new Error(`${path} is missing: run scripts/provision.sh (npm test does)`);
  return path;
}
