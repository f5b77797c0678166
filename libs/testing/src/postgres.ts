import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

const run = promisify(execFile);

/** Debian and Ubuntu install each major under /usr/lib/postgresql/<major>/bin. */
function newestPostgresBin(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((d) => /^\d+$/.test(d))
        .map(Number)
    : [];
  if (majors.length === 0) throw new Error(`no PostgreSQL under ${root}: run scripts/provision.sh`);
  return join(root, String(Math.max(...majors)), 'bin');
}
// initdb refuses to run as root, so as root the cluster belongs to this unprivileged user.
const PG_OS_USER = 'tally-pg';

export type ThrowawayPostgres = {
  /** Superuser URL of the `postgres` database, e.g. postgresql://postgres@127.0.0.1:5433/postgres */
  url: string;
  /** Ends the server as a crash or power loss would (no checkpoint, every connection cut); the data stays. */
  crash(): Promise<void>;
  /** Starts the server again on the same port and data after `crash`. */
  start(): Promise<void>;
  /** Stops every server process where it stands (SIGSTOP), as a stalled disk would: connections stay open, nothing answers. */
  freeze(): Promise<void>;
  /** Lets the processes `freeze` stopped go on (SIGCONT). */
  thaw(): Promise<void>;
  stop(): Promise<void>;
};

export type PostgresOptions = Readonly<{
  /**
   * Every commit written out before it is acknowledged (synchronous_commit on), so `crash` loses
   * none, as on an installed server; off by default, for speed.
   */
  durableCommits?: boolean;
}>;

/**
 * Starts a private PostgreSQL cluster in a temp dir on a free loopback port, trust auth, tuned for
 * speed over durability. For tests only.
 */
export const startPostgres = async (options: PostgresOptions = {}): Promise<ThrowawayPostgres> => {
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await ensureOsUser();
  const dir = mkdtempSync(join(tmpdir(), 'tally-pg-'));
  const dataDir = join(dir, 'data');
  if (asRoot) {
    const { uid, gid } = await osUserIds();
    chownSync(dir, uid, gid);
  }
  const pgBin = process.env['PG_BIN'] ?? newestPostgresBin();
  const asPgUser = (bin: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', PG_OS_USER, '--', join(pgBin, bin), ...args]) : run(join(pgBin, bin), args);

  const port = await freePort();
  const serverOptions = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    `-c synchronous_commit=${options.durableCommits ? 'on' : 'off'}`,
    '-c full_page_writes=off',
  ].join(' ');
  const start = async () => {
    await asPgUser('pg_ctl', ['-D', dataDir, '-o', serverOptions, '-l', join(dir, 'postgres.log'), '-w', 'start']);
  };
  const stopServer = () => asPgUser('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
  try {
    await asPgUser('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    await start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    crash: async () => {
      await stopServer();
    },
    start,
    freeze: async () => signalServer(dataDir, 'STOP'),
    thaw: async () => signalServer(dataDir, 'CONT'),
    stop: async () => {
      await signalServer(dataDir, 'CONT').catch(() => undefined);
      await stopServer().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

/**
 * Sends `signal` to the postmaster (its pid is postmaster.pid's first line) and every process it
 * forked; the postmaster first, so it forks none in between.
 */
const signalServer = async (dataDir: string, signal: 'STOP' | 'CONT'): Promise<void> => {
  const postmaster = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]!.trim();
  await run('kill', [`-${signal}`, postmaster]);
  const children = await run('pgrep', ['-P', postmaster]).then(
    (r) => r.stdout.split('\n').filter(Boolean),
    () => [],
  );
  if (children.length > 0) await run('kill', [`-${signal}`, ...children]);
};

const ensureOsUser = async (): Promise<void> => {
  const exists = await run('id', ['-u', PG_OS_USER]).then(
    () => true,
    () => false,
  );
  if (!exists) await run('useradd', ['-r', '-M', '-s', '/usr/sbin/nologin', PG_OS_USER]);
};

const osUserIds = async (): Promise<{ uid: number; gid: number }> => {
  const [uid, gid] = await Promise.all([run('id', ['-u', PG_OS_USER]), run('id', ['-g', PG_OS_USER])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
};
