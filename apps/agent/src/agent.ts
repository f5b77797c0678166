import type { NodeBudgetReport, NodeHeartbeat } from '@tally/contracts';
import { ingressPushUrls, type IngressPushUrls } from '@tally/capacity';
import { type NodeRegistry, ROLE_ACCEPTS } from '@tally/nodes';
import { resolveBudget } from './budget.js';
import type { AgentConfig } from './config.js';
import { measureFilesystems, type FilesystemProbe } from './probe/filesystems.js';
import type { HostProbe } from './probe/host-probe.js';

/** Hardware rarely changes; a cgroup limit or a renegotiated link is picked up within this. */
export const BUDGET_REFRESH_MS = 60_000;

export type AgentDeps = Readonly<{
  config: AgentConfig;
  probe: HostProbe;
  /** Measured on every beat: free space moves with every second recorded. */
  filesystems: FilesystemProbe;
  registry: Pick<NodeRegistry, 'heartbeat' | 'leave'>;
  version: string;
  now?: () => Date;
  log?: (line: string) => void;
}>;

export type RunningAgent = Readonly<{
  /** Stops beating but leaves the heartbeat to expire, as a crash would. */
  stop(): Promise<void>;
  /** Stops beating and leaves the pool at once. */
  shutdown(): Promise<void>;
}>;

/** Where this node's ingress takes pushes, when its role runs ingress (the origin runs every kind) and it has a worker runtime. */
function ingressOf(config: AgentConfig): IngressPushUrls | undefined {
  const runsIngress = config.role === 'origin' || ROLE_ACCEPTS[config.role].includes('ingress.rtmp');
  if (config.workers.runtime === 'none' || !runsIngress) return undefined;
  return ingressPushUrls(config.workers.nodeIp, { rtmp: config.workers.ports.ingressRtmp, whip: config.workers.ports.ingressWhip });
}

/** Measures and sends the first heartbeat (rejecting if that fails), then beats every interval. */
export async function startAgent(deps: AgentDeps): Promise<RunningAgent> {
  const { config, probe, registry, version } = deps;
  const now = deps.now ?? (() => new Date());
  const log = deps.log ?? ((line: string) => console.log(line));
  const startedAt = now().toISOString();
  const warned = new Set<string>();
  const ingress = ingressOf(config);
  let budget: { value: NodeBudgetReport; at: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let stopped = false;

  const warnOnce = (warning: string) => {
    if (warned.has(warning)) return;
    warned.add(warning);
    log(`warning: ${warning}`);
  };

  const currentBudget = async (): Promise<NodeBudgetReport> => {
    const at = now().getTime();
    if (budget && at - budget.at < BUDGET_REFRESH_MS) return budget.value;
    const resolved = resolveBudget(await probe.budget(), config.overrides);
    for (const warning of resolved.warnings) warnOnce(warning);
    budget = { value: resolved.budget, at };
    return resolved.budget;
  };

  const beat = async (): Promise<void> => {
    const [nodeBudget, used, filesystems] = await Promise.all([
      currentBudget(),
      probe.usage(),
      measureFilesystems(deps.filesystems, config.mediaDirs, { nodeId: config.nodeId, sharedName: config.diskSharedName }, (dir, error) =>
        warnOnce(`cannot measure ${dir}: ${error instanceof Error ? error.message : String(error)}`),
      ),
    ]);
    const heartbeat: NodeHeartbeat = {
      nodeId: config.nodeId,
      role: config.role,
      budget: nodeBudget,
      used,
      filesystems,
      ...(ingress ? { ingress } : {}),
      labels: { ...config.labels },
      version,
      startedAt,
      sentAt: now().toISOString(),
    };
    if (!stopped) await registry.heartbeat(heartbeat, config.heartbeat.ttlS);
  };

  // setTimeout after each beat, not setInterval: a slow Redis never stacks beats.
  const schedule = () => {
    timer = setTimeout(() => {
      inFlight = beat()
        .catch((error: unknown) => log(`heartbeat failed: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, config.heartbeat.intervalS * 1_000);
  };

  await beat();
  schedule();

  const stop = async () => {
    stopped = true;
    clearTimeout(timer);
    await inFlight;
  };
  return {
    stop,
    async shutdown() {
      await stop();
      await registry.leave(config.nodeId);
    },
  };
}
