import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CHECKOUT = resolve(import.meta.dirname, '../../..');
let usableCheckout: string | undefined;

/**
 * The services run the checkout as an unprivileged user, and install.sh refuses a checkout it
 * cannot read (a clone under /root, say): such a checkout is copied once to a readable place, as
 * scripts/install.int.sh does.
 */
export async function readableCheckout(): Promise<string> {
  if (usableCheckout) return usableCheckout;
  const probe = ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', 'test', '-r', join(CHECKOUT, 'apps/api/src/main.ts')];
  const readable = await run('setpriv', probe).then(
    () => true,
    () => false,
  );
  if (readable) return (usableCheckout = CHECKOUT);
  const copy = mkdtempSync(join(tmpdir(), 'tally-join-src-'));
  chmodSync(copy, 0o755);
  await run('cp', ['-a', `${CHECKOUT}/.`, `${copy}/`], { maxBuffer: 16 * 1024 * 1024 });
  return (usableCheckout = copy);
}

/**
 * A second host on this machine: a network namespace joined to the test's by a veth pair. The
 * origin side gets `originIp`, the node `nodeIp`; nothing routes anywhere else.
 */
export type TwoHosts = Readonly<{ ns: string; originIp: string; nodeIp: string; remove(): Promise<void> }>;

export async function addHost(): Promise<TwoHosts> {
  const id = randomBytes(3).toString('hex');
  const ns = `tally-join-${id}`;
  const subnet = `10.233.${Math.floor(Math.random() * 250) + 1}`;
  const [originIp, nodeIp] = [`${subnet}.1`, `${subnet}.2`];
  const ip = (...args: string[]) => run('ip', args);
  await ip('netns', 'add', ns);
  try {
    await ip('link', 'add', `tj${id}`, 'type', 'veth', 'peer', 'name', 'tj1', 'netns', ns);
    await ip('addr', 'add', `${originIp}/24`, 'dev', `tj${id}`);
    await ip('link', 'set', `tj${id}`, 'up');
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
    await ip('-n', ns, 'addr', 'add', `${nodeIp}/24`, 'dev', 'tj1');
    await ip('-n', ns, 'link', 'set', 'tj1', 'up');
  } catch (error) {
    await ip('netns', 'del', ns).catch(() => undefined);
    throw error;
  }
  return {
    ns,
    originIp,
    nodeIp,
    async remove() {
      await ip('link', 'del', `tj${id}`).catch(() => undefined);
      await ip('netns', 'del', ns).catch(() => undefined);
    },
  };
}

/** Exposes a loopback-only service of the origin on `host:port`, as a bind address would. */
export async function forward(host: string, port: number, to: number): Promise<Server> {
  const server = createServer((socket) => {
    const upstream = connect(to, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(port, host, ok));
  return server;
}

export type InstallResult = Readonly<{ code: number; output: string }>;

/** ./install.sh ARGS inside the node's namespace, as root, the way an operator runs it there (from `checkout`, default this one). */
export async function installOnNode(
  ns: string,
  args: string[],
  env: Record<string, string> = {},
  checkout?: string,
): Promise<InstallResult> {
  checkout ??= await readableCheckout();
  try {
    const { stdout, stderr } = await run(
      'ip',
      ['netns', 'exec', ns, 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'bash', join(checkout, 'install.sh'), ...args],
      {
        cwd: checkout,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

export function nodeHome(): string {
  return mkdtempSync(join(tmpdir(), 'tj-'));
}

/** SIGKILL for a service of a home and its supervisor, as a power cut would. */
export function killService(home: string, name: string): void {
  const pgid = Number(readFileSync(join(home, 'run', `${name}.pid`), 'utf8').trim());
  process.kill(-pgid, 'SIGKILL');
}

export function removeHome(home: string): void {
  rmSync(home, { recursive: true, force: true });
}

/**
 * ./install.sh ARGS as root on a host of its own filesystem view: in this network namespace but a
 * mount namespace where each `binds` target shows its source instead (a node that does not mount
 * the origin's directory at that path). The services it starts stay in that view.
 */
export async function installWithPrivateMounts(
  binds: ReadonlyArray<Readonly<{ source: string; target: string }>>,
  args: string[],
  env: Record<string, string> = {},
): Promise<InstallResult> {
  const checkout = await readableCheckout();
  const mounts = binds.map((_, i) => `mount --bind "\${${2 * i + 1}}" "\${${2 * i + 2}}" &&`).join(' ');
  const script = `${mounts} shift ${2 * binds.length} && exec "$@"`;
  const command = ['env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'bash', join(checkout, 'install.sh'), ...args];
  try {
    const { stdout, stderr } = await run(
      'unshare',
      ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', ...binds.flatMap((b) => [b.source, b.target]), ...command],
      { cwd: checkout, maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
