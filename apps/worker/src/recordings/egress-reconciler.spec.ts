import type { Admitter, CapacityLedger } from '@tally/admission';
import type { PrismaService } from '@tally/db';
import { LivekitEgressClient, type LivekitIngressClient, type LivekitRoomClient } from '@tally/livekit';
import type { FinaliseQueue, PassthroughEgresses, RecordingLifecycle } from '@tally/recordings';
import { type Clock, EgressStopRequests, STOP_PATIENCE_S } from '@tally/runtime';
import type { Redis } from 'ioredis';
import { EgressClient, EgressInfo, EgressStatus } from 'livekit-server-sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MediaStopper } from '../reconcile/media-stopper.js';
import { EgressReconciler } from './egress-reconciler.service.js';
import { HlsSessionsRepository } from './hls-sessions.repository.js';
import { RecordingRowsRepository } from './recording-rows.repository.js';

/** Redis's SET … EX and MGET, on a clock the test moves; `down` makes every call fail like a lost connection. */
class ExpiringStore {
  nowMs = Date.parse('2026-01-01T00:00:00Z');
  down = false;
  private readonly values = new Map<string, { value: string; untilMs: number }>();

  set(key: string, value: string, _ex: 'EX', seconds: number): Promise<'OK'> {
    if (this.down) return Promise.reject(new Error('Connection is closed.'));
    this.values.set(key, { value, untilMs: this.nowMs + seconds * 1000 });
    return Promise.resolve('OK');
  }

  mget(keys: string[]): Promise<(string | null)[]> {
    if (this.down) return Promise.reject(new Error('Connection is closed.'));
    return Promise.resolve(
      keys.map((k) => {
        const entry = this.values.get(k);
        return entry && entry.untilMs > this.nowMs ? entry.value : null;
      }),
    );
  }
}

/** An egress of a recording that is over: LiveKit still lists it STARTING, and its stop never gets an answer. */
const ghost = new EgressInfo({ egressId: 'EG_ghost', roomName: 'app_gone.str_gone', status: EgressStatus.EGRESS_STARTING });

/**
 * The real egress adapter, noting its stops in the real EgressStopRequests (on a fake Redis), with
 * only LiveKit's SDK beneath it answered here: every process that stops an egress (the API's
 * recording and HLS stops, the worker's teardown and sweep) goes through this adapter.
 */
function setup() {
  const store = new ExpiringStore();
  vi.spyOn(EgressClient.prototype, 'listEgress').mockResolvedValue([ghost]);
  const stopEgress = vi
    .spyOn(EgressClient.prototype, 'stopEgress')
    .mockRejectedValue(new Error('twirp error deadline_exceeded: request timed out'));
  const clock: Clock = { now: () => new Date(store.nowMs) };
  const stops = new EgressStopRequests(store as unknown as Pick<Redis, 'set' | 'mget'>, clock);
  const egress = new LivekitEgressClient({ url: 'http://127.0.0.1:7880', apiKey: 'unit', apiSecret: 'unit-secret' }, stops);
  const prisma = {
    recording: { findMany: () => Promise.resolve([]) },
    recordingEgress: { findMany: () => Promise.resolve([]) },
    hlsSession: { findUnique: () => Promise.resolve(null) },
  } as unknown as PrismaService;
  const sut = new EgressReconciler(
    new RecordingRowsRepository(prisma),
    new HlsSessionsRepository(prisma),
    egress,
    {} as RecordingLifecycle,
    {} as FinaliseQueue,
    {} as CapacityLedger,
    {} as Admitter,
    {} as PassthroughEgresses,
    stops,
  );
  const sweep = () => sut.run(new Date(store.nowMs));
  const stopsAsked = () => stopEgress.mock.calls.map(([id]) => id);
  const teardown = new MediaStopper({} as LivekitRoomClient, egress, {} as LivekitIngressClient);
  return { store, egress, stopsAsked, sweep, teardown };
}

describe(EgressReconciler.name, () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('stops a ghost egress once, leaves it to finish on the next sweeps, and asks again only after the patience is over', async () => {
    const { store, stopsAsked, sweep } = setup();
    await sweep();
    expect(stopsAsked()).toEqual(['EG_ghost']);
    store.nowMs += 30_000;
    await sweep();
    store.nowMs += 30_000;
    await sweep();
    expect(stopsAsked()).toEqual(['EG_ghost']);
    store.nowMs += STOP_PATIENCE_S * 1000;
    await sweep();
    expect(stopsAsked()).toEqual(['EG_ghost', 'EG_ghost']);
  });

  it('leaves alone a ghost the app teardown has just asked to stop', async () => {
    const { store, stopsAsked, sweep, teardown } = setup();
    await teardown.stopEgress('EG_ghost');
    store.nowMs += 30_000;
    const report = await sweep();
    expect(stopsAsked()).toEqual(['EG_ghost']);
    expect(report.ghostEgressesStopped).toBe(0);
  });

  it('leaves alone a ghost the API has just asked to stop (a recording or HLS stop, through the same adapter)', async () => {
    const { store, egress, stopsAsked, sweep } = setup();
    await egress.stop('EG_ghost').catch(() => undefined);
    store.nowMs += 30_000;
    const report = await sweep();
    expect(stopsAsked()).toEqual(['EG_ghost']);
    expect(report.ghostEgressesStopped).toBe(0);
  });

  it('still asks the stop when Redis cannot note it, and stops it once more on the next sweep', async () => {
    const { store, egress, stopsAsked, sweep } = setup();
    store.down = true;
    await egress.stop('EG_ghost').catch(() => undefined);
    expect(stopsAsked()).toEqual(['EG_ghost']);
    store.down = false;
    store.nowMs += 30_000;
    await sweep();
    await sweep();
    expect(stopsAsked()).toEqual(['EG_ghost', 'EG_ghost']);
  });

  it('stops a ghost when Redis cannot say whether it is being stopped', async () => {
    const { store, stopsAsked, sweep } = setup();
    store.down = true;
    await sweep();
    expect(stopsAsked()).toEqual(['EG_ghost']);
  });
});
