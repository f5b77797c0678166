import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AppView, CreatedApiKey, StreamToken, StreamView } from '@tally/contracts';
import { ApiClient, waitFor } from '@tally/testing';
import pg from 'pg';

const run = promisify(execFile);

/** The node scripts/acceptance.sh installed with ./install.sh, seen only through what a user sees. */
export type Installed = Readonly<{
  home: string;
  /** Where the API answers on this host. */
  baseUrl: string;
  nodeIp: string;
  admin: ApiClient;
  anonymous: ApiClient;
  adminKey: string;
  /** tally.env as install.sh wrote it. */
  env: Readonly<Record<string, string>>;
}>;

/** The installed home named by TALLY_ACCEPTANCE_HOME (scripts/acceptance.sh sets it). */
export function installed(): Installed {
  const home = process.env['TALLY_ACCEPTANCE_HOME'];
  if (!home) throw new Error('TALLY_ACCEPTANCE_HOME is not set: run the acceptance suite with bash scripts/acceptance.sh');
  const env = Object.fromEntries(
    readFileSync(join(home, 'tally.env'), 'utf8')
      .split('\n')
      .map((line) => /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
  const adminKey = readFileSync(join(home, 'admin.key'), 'utf8').trim();
  const baseUrl = `http://127.0.0.1:${env['TALLY_PORT'] ?? '8080'}`;
  const anonymous = new ApiClient(baseUrl);
  return { home, baseUrl, nodeIp: env['TALLY_NODE_IP'] ?? '127.0.0.1', admin: anonymous.withKey(adminKey), anonymous, adminKey, env };
}

export type Tenant = Readonly<{ app: AppView; client: ApiClient; key: string }>;

/** An app with its own key, as the README tells an operator to create one. */
export async function createTenant(admin: ApiClient, name: string): Promise<Tenant> {
  const created = await admin.post<AppView>('/v1/apps', { name });
  if (created.status !== 201) throw new Error(`POST /v1/apps: ${created.status} ${JSON.stringify(created.body)}`);
  const key = await admin.post<CreatedApiKey>(`/v1/apps/${created.body.id}/keys`);
  if (key.status !== 201) throw new Error(`POST keys: ${key.status} ${JSON.stringify(key.body)}`);
  return { app: created.body, client: admin.withKey(key.body.key), key: key.body.key };
}

export async function createStream(tenant: Tenant, name: string): Promise<StreamView> {
  const response = await tenant.client.post<StreamView>(`/v1/apps/${tenant.app.id}/streams`, { name });
  if (response.status !== 201) throw new Error(`POST streams: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export async function streamToken(tenant: Tenant, streamId: string, role: 'publisher' | 'viewer', identity: string): Promise<StreamToken> {
  const response = await tenant.client.post<StreamToken>(`/v1/apps/${tenant.app.id}/streams/${streamId}/tokens`, { identity, role });
  if (response.status !== 201) throw new Error(`POST tokens: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Resolves once the stream is live with `publishers` publishers. */
export function streamLive(tenant: Tenant, streamId: string, publishers = 1, timeoutMs = 60_000): Promise<StreamView> {
  return waitFor(
    `stream ${streamId} live with ${publishers} publisher(s)`,
    async () => {
      const s = (await tenant.client.get<StreamView>(`/v1/apps/${tenant.app.id}/streams/${streamId}`)).body;
      return s.status === 'live' && s.publishers === publishers ? s : undefined;
    },
    timeoutMs,
  );
}

export type Probe = Readonly<{ streams: string[]; codecs: string[]; durationS: number }>;

/** What ffprobe finds in a media file: its stream types and codecs (each sorted) and container duration. */
export async function probe(path: string): Promise<Probe> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration:stream=codec_type,codec_name',
    '-of',
    'json',
    path,
  ]);
  const parsed = JSON.parse(stdout) as { format: { duration?: string }; streams: { codec_type: string; codec_name: string }[] };
  return {
    streams: parsed.streams.map((s) => s.codec_type).sort(),
    codecs: parsed.streams.map((s) => s.codec_name).sort(),
    durationS: Number(parsed.format.duration ?? 0),
  };
}

/** The picture size of every decoded frame of the file's first video stream, in order. */
export async function frames(path: string): Promise<{ width: number; height: number }[]> {
  const { stdout } = await run(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'frame=width,height', '-of', 'json', path],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return (JSON.parse(stdout) as { frames?: { width: number; height: number }[] }).frames ?? [];
}

/** Seconds between the first and the last packet of the file's first stream of that type. */
export async function packetSpanS(path: string, type: 'video' | 'audio'): Promise<number> {
  const { stdout } = await run(
    'ffprobe',
    ['-v', 'error', '-select_streams', type[0]!, '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', path],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const times = stdout
    .split('\n')
    .map((l) => Number.parseFloat(l))
    .filter((t) => Number.isFinite(t));
  return times.length < 2 ? 0 : Math.max(...times) - Math.min(...times);
}

/** Decodes the whole file (errors are fatal): "it plays", as a player would find. */
export async function decodes(path: string): Promise<void> {
  await run('ffmpeg', ['-v', 'error', '-xerror', '-i', path, '-f', 'null', '-']);
}

/**
 * Sets a recording's end in the installed node's Postgres (DATABASE_URL in tally.env), as if it had
 * ended then: the one step of the suite that does not go through the public surface, since waiting
 * days for a retention is not a test.
 */
export async function backdateRecordingEnd(node: Installed, recordingId: string, endedAt: Date): Promise<void> {
  const db = new pg.Client({ connectionString: node.env['DATABASE_URL'] });
  await db.connect();
  try {
    const updated = await db.query('UPDATE "Recording" SET "endedAt" = $1 WHERE id = $2', [endedAt, recordingId]);
    if (updated.rowCount !== 1) throw new Error(`no recording ${recordingId} in ${node.home}'s database`);
  } finally {
    await db.end();
  }
}
