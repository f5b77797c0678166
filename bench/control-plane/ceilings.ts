// What a stream create's two durable side effects cost on this host when nothing else runs: the
// stream row's INSERT (one Postgres commit) and LiveKit's CreateRoom, each driven on its own.
import { randomUUID } from 'node:crypto';
import { LivekitRoomClient } from '@tally/livekit';
import pg from 'pg';
import { pidsMatching, processTree, sampleTree } from '../lib/proc.js';

export type Ceiling = Readonly<{
  operation: string;
  concurrency: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the service doing the work (Postgres' processes, livekit-server), per operation. */
  serverCpuUsPerOp: number;
  /** CPU of the calling process (the driver or the Twirp client, what the API pays), per operation. */
  clientCpuUsPerOp: number;
}>;

type Options = Readonly<{
  databaseUrl: string;
  livekit: Readonly<{ url: string; apiKey: string; apiSecret: string }>;
  appId: string;
  concurrency: number;
  durationS: number;
}>;

/** Runs `once` from `concurrency` loops for `durationS`, timing each call and the CPU of `server` and of this process. */
async function drive(operation: string, server: () => number[], options: Options, once: () => Promise<void>): Promise<Ceiling> {
  const latencies: number[] = [];
  const serverBefore = sampleTree(server()).cpuSeconds;
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const end = started + options.durationS * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await once();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const serverCpuS = sampleTree(server()).cpuSeconds - serverBefore;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const n = Math.max(1, latencies.length);
  return {
    operation,
    concurrency: options.concurrency,
    opsPerSec: latencies.length / elapsedS,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    serverCpuUsPerOp: (serverCpuS * 1e6) / n,
    clientCpuUsPerOp: (client.user + client.system) / n,
  };
}

/**
 * The stream row's INSERT through a pool the size of the API's (pg's default, 10 connections), and
 * LiveKit's CreateRoom through Tally's room client, as the API issues them; the rooms are removed after.
 */
export async function measureCeilings(options: Options): Promise<Ceiling[]> {
  const pool = new pg.Pool({ connectionString: options.databaseUrl });
  // pg_ctl detaches the postmaster: it is found by its port, its backends under it. Other Postgres
  // and livekit-server processes on a shared host are not this bench's.
  const port = new URL(options.databaseUrl).port;
  const postgres = () => processTree(pidsMatching(`-p ${port} `));
  const ours = new Set(processTree([process.pid]));
  const livekitServer = () => pidsMatching('livekit-server').filter((pid) => ours.has(pid));
  try {
    const insert = await drive('Postgres INSERT of a stream row (one commit)', postgres, options, async () => {
      const id = `str_${randomUUID()}`;
      await pool.query('INSERT INTO "Stream" ("id", "appId", "name", "room", "createdAt") VALUES ($1, $2, $3, $4, $5)', [
        id,
        options.appId,
        'ceiling',
        `ceiling-${id}`,
        new Date(),
      ]);
    });
    await pool.query(`DELETE FROM "Stream" WHERE "name" = 'ceiling'`);

    const rooms = new LivekitRoomClient(options.livekit);
    const created: string[] = [];
    const createRoom = await drive('LiveKit CreateRoom', livekitServer, options, async () => {
      const name = `ceiling-${randomUUID()}`;
      await rooms.createRoom(name, { emptyTimeoutS: 30, departureTimeoutS: 30 });
      created.push(name);
    });
    for (let i = 0; i < created.length; i += 20) await Promise.all(created.slice(i, i + 20).map((name) => rooms.deleteRoom(name)));
    return [insert, createRoom];
  } finally {
    await pool.end();
  }
}
