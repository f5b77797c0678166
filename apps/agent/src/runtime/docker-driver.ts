import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import Docker from 'dockerode';
import { OutputLog } from './output-log.js';
import type { WorkerDriver, WorkerExitInfo, WorkerHandle, WorkerSpec } from './worker-driver.js';

export type DockerDriverOptions = Readonly<{ socketPath: string }>;

type DockerHandle = WorkerHandle & Readonly<{ container: Docker.Container; output: OutputLog }>;

/** Labels every container the agent creates carries, so orphans are found by label, not by guesswork. */
const LABEL = 'io.tally.worker';
const OOM_EVENT_GRACE_MS = 1_000;

/**
 * Workers as containers through the Docker Engine API (dockerode; the docker CLI is never run).
 * Host networking, the work directory and recordings mounted at their host paths, memory (no
 * swap on top) and CPU limits set by the engine.
 */
export class DockerDriver implements WorkerDriver {
  readonly name = 'docker';
  private readonly docker: Docker;

  constructor(options: DockerDriverOptions) {
    this.docker = new Docker({ socketPath: options.socketPath });
  }

  async start(spec: WorkerSpec): Promise<WorkerHandle> {
    mkdirSync(spec.workDir, { recursive: true });
    for (const file of spec.files) writeFileSync(join(spec.workDir, file.name), file.content, { mode: 0o600 });
    const memory = spec.limits.memoryMb * 1024 * 1024;
    const container = await this.docker.createContainer({
      name: spec.name,
      Image: spec.image,
      Cmd: [...spec.command],
      Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
      WorkingDir: spec.workDir,
      Labels: { [LABEL]: spec.kind },
      HostConfig: {
        NetworkMode: 'host',
        Binds: [spec.workDir, ...spec.mounts].map((dir) => `${dir}:${dir}`),
        Memory: memory,
        MemorySwap: memory,
        // A CFS quota rather than NanoCpus: dockerd rejects NanoCpus above the host's core count,
        // while a node's budget may grant a worker more than the cores this host has.
        CpuPeriod: 100_000,
        CpuQuota: spec.limits.cpuMillicores * 100,
        Init: true,
        ShmSize: 256 * 1024 * 1024,
      },
    });
    const output = new OutputLog(join(spec.workDir, `${spec.kind}.log`));
    const logs = await container.attach({ stream: true, stdout: true, stderr: true });
    const lines = new PassThrough();
    this.docker.modem.demuxStream(logs, lines, lines);
    createInterface({ input: lines }).on('line', (line) => output.push(line));
    const oomKilled = this.watchOom(container.id);
    // next-exit: a created container is already "not running", the default condition.
    const waited = container.wait({ condition: 'next-exit' });
    await container.start();
    const exited = waited.then(async (result: { StatusCode: number }): Promise<WorkerExitInfo> => {
      // The engine's oom event can trail the exit by a moment; a SIGKILLed worker waits for it.
      const oom = result.StatusCode === 137 ? await oomKilled.settled(OOM_EVENT_GRACE_MS) : oomKilled.seen();
      const state = await container.inspect().then(
        (info) => info.State,
        () => undefined,
      );
      oomKilled.close();
      await container.remove({ force: true }).catch(() => undefined);
      lines.end();
      return { code: result.StatusCode, signal: null, oomKilled: oom || (state?.OOMKilled ?? false) };
    });
    const handle: DockerHandle = {
      id: container.id.slice(0, 12),
      spec,
      container,
      output,
      enforcedBy: 'docker',
      startedAt: new Date(),
      exited,
      onOutput: (listener) => output.subscribe(listener),
    };
    return handle;
  }

  /** Follows the engine's events for the container's `oom`, the kernel killing it at its memory limit. */
  private watchOom(containerId: string): { seen(): boolean; settled(graceMs: number): Promise<boolean>; close(): void } {
    let oom = false;
    let stream: Readable | undefined;
    const listening = this.docker
      .getEvents({ filters: { container: [containerId], event: ['oom'] } })
      .then((events) => {
        stream = events as Readable;
        events.on('data', () => (oom = true));
        events.on('error', () => undefined);
      })
      .catch(() => undefined);
    return {
      seen: () => oom,
      settled: async (graceMs) => {
        await listening;
        const deadline = Date.now() + graceMs;
        while (!oom && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        return oom;
      },
      close: () => stream?.destroy(),
    };
  }

  async stop(handle: WorkerHandle, graceMs: number): Promise<void> {
    await (handle as DockerHandle).container.stop({ t: Math.ceil(graceMs / 1000) }).catch(() => undefined);
    await handle.exited;
  }

  async rssMb(handle: WorkerHandle): Promise<number | null> {
    try {
      const stats = await (handle as DockerHandle).container.stats({ stream: false });
      // cgroup v1 engines report total_rss, cgroup v2 engines anon; else usage less page cache.
      const memory = stats.memory_stats as Partial<typeof stats.memory_stats>;
      const detail = memory.stats as Partial<Record<string, number>> | undefined;
      const rss =
        detail?.['total_rss'] ?? detail?.['anon'] ?? (memory.usage === undefined ? undefined : memory.usage - (detail?.['cache'] ?? 0));
      return rss === undefined ? null : Math.round(rss / (1024 * 1024));
    } catch {
      return null;
    }
  }

  logs(handle: WorkerHandle, lines: number): Promise<string> {
    return Promise.resolve((handle as DockerHandle).output.tail(lines).join('\n'));
  }

  async removeOrphans(namePrefix: string): Promise<number> {
    const containers = await this.docker.listContainers({ all: true, filters: { label: [LABEL] } });
    const orphans = containers.filter((c) => c.Names.some((n) => n.replace(/^\//, '').startsWith(namePrefix)));
    for (const orphan of orphans) {
      // 404/409: already gone, or its own agent is removing it right now.
      await this.docker
        .getContainer(orphan.Id)
        .remove({ force: true })
        .catch((error: { statusCode?: number }) => {
          if (error.statusCode !== 404 && error.statusCode !== 409) throw error;
        });
    }
    return orphans.length;
  }
}
