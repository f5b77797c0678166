import { accessSync, constants, readFileSync } from 'node:fs';
import { availableParallelism, networkInterfaces } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import {
  EGRESS_PROCESS_ENV,
  egressHostCpus,
  renderEgressServiceConfig,
  renderIngressServiceConfig,
  workerLimits,
  type CapacityModel,
  type NodeBudget,
} from '@tally/capacity';
import type { WorkerKind } from '@tally/contracts';
import type { WorkerSpec } from './worker-driver.js';
import type { WorkersConfig } from './workers-config.js';

/** In the images deploy/images builds; on the host, next to this repository's checkout. */
const IMAGE_ENTRYPOINT = '/usr/local/bin/egress-entrypoint.sh';
const HOST_ENTRYPOINT = resolve(import.meta.dirname, '..', '..', '..', '..', 'deploy', 'workers', 'egress-entrypoint.sh');
const IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export type SpecInput = Readonly<{
  nodeId: string;
  budget: NodeBudget;
  model: CapacityModel;
  config: WorkersConfig;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}>;

/** What the node's egress or ingress worker runs with: config from the capacity model, limits from the node's budget. */
export function workerSpec(kind: WorkerKind, input: SpecInput): WorkerSpec {
  return kind === 'egress' ? egressSpec(input) : ingressSpec(input);
}

function egressSpec({ nodeId, budget, model, config, logLevel }: SpecInput): WorkerSpec {
  const livekit = requireLivekit(config);
  const workDir = join(config.dir, 'egress');
  const configFile = join(workDir, 'egress.yaml');
  const docker = config.runtime === 'docker';
  const service = renderEgressServiceConfig({
    ...livekit,
    redisUrl: config.redisUrl,
    ...(config.redisSentinel === undefined ? {} : { redisSentinel: config.redisSentinel }),
    // No health_port: egress binds it on every address and lists every running request there. The
    // agent supervises the process itself (readiness from its log, exits from the runtime).
    templatePort: config.ports.egressTemplate,
    logLevel: logLevel ?? 'info',
    model,
    node: budget,
    hostCpus: egressHostCpus(readIfPresent, availableParallelism()),
    chromeSandbox: !docker && process.getuid?.() !== 0,
  });
  return {
    kind: 'egress',
    name: workerName(nodeId, 'egress'),
    image: config.images.egress,
    command: docker ? [IMAGE_ENTRYPOINT, 'egress', configFile] : [HOST_ENTRYPOINT, onPath(config.binaries.egress), configFile],
    env: {
      PATH: docker ? IMAGE_PATH : (process.env['PATH'] ?? IMAGE_PATH),
      HOME: join(workDir, 'home'),
      XDG_RUNTIME_DIR: join(workDir, 'run'),
      TMPDIR: join(workDir, 'tmp'),
      ...EGRESS_PROCESS_ENV,
    },
    workDir,
    files: [{ name: 'egress.yaml', content: `${JSON.stringify(service, null, 2)}\n` }], // JSON is YAML
    mounts: [config.recordingsDir],
    limits: workerLimits(model, budget).egress,
    // Logged after it subscribes to start requests, so LiveKit can hand it work from then on.
    readyMarker: 'service ready',
  };
}

/** Whether `ip` is an address of one of this host's interfaces other than loopback (workers use host networking). */
export function isOwnAddress(ip: string, interfaces = networkInterfaces()): boolean {
  return Object.values(interfaces).some((addresses) => addresses?.some((a) => !a.internal && a.address === ip) === true);
}

function ingressSpec({ nodeId, budget, model, config, logLevel }: SpecInput): WorkerSpec {
  const livekit = requireLivekit(config);
  const workDir = join(config.dir, 'ingress');
  const configFile = join(workDir, 'ingress.yaml');
  const service = renderIngressServiceConfig({
    ...livekit,
    redisUrl: config.redisUrl,
    ...(config.redisSentinel === undefined ? {} : { redisSentinel: config.redisSentinel }),
    // No health_port, as for egress: the agent supervises the process.
    rtmpPort: config.ports.ingressRtmp,
    whipPort: config.ports.ingressWhip,
    httpRelayPort: config.ports.ingressRelay,
    udpPort: config.ports.ingressUdp,
    nodeIp: config.nodeIp,
    ...(isOwnAddress(config.nodeIp) ? { bindIp: config.nodeIp } : {}),
    ...(config.turn === undefined ? {} : { turnServers: [config.turn] }),
    logLevel: logLevel ?? 'info',
  });
  const docker = config.runtime === 'docker';
  const binary = docker ? 'ingress' : onPath(config.binaries.ingress);
  return {
    kind: 'ingress',
    name: workerName(nodeId, 'ingress'),
    image: config.images.ingress,
    command: [binary, '--config', configFile],
    env: {
      // Ingress execs `ingress run-handler` for every session.
      PATH: docker ? IMAGE_PATH : `${dirname(binary)}${delimiter}${process.env['PATH'] ?? IMAGE_PATH}`,
      HOME: workDir,
      TMPDIR: workDir,
      GST_DEBUG: '1',
    },
    workDir,
    files: [{ name: 'ingress.yaml', content: `${JSON.stringify(service, null, 2)}\n` }],
    mounts: [],
    limits: workerLimits(model, budget).ingress,
    // Logged once its CPU monitor runs; sessions are refused before that.
    readyMarker: 'available CPU cores',
  };
}

/** Container and cgroup names; a restarted agent finds its predecessor's workers by this prefix. */
export function workerName(nodeId: string, kind: WorkerKind): string {
  return `tally-${kind}-${nodeId}`;
}

function requireLivekit(config: WorkersConfig): NonNullable<WorkersConfig['livekit']> {
  if (!config.livekit) throw new Error('media workers need LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET');
  return config.livekit;
}

/** An absolute path for a program named bare, as the shell would find it. */
function onPath(program: string): string {
  if (isAbsolute(program)) return program;
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`${program} is not on PATH (set TALLY_${program.toUpperCase()}_BIN)`);
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
