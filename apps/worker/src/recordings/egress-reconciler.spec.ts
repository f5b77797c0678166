import type { Admitter, CapacityLedger } from '@tally/admission';
import type { PrismaService } from '@tally/db';
import type { EgressSummary, LivekitEgressClient, LivekitIngressClient, LivekitRoomClient } from '@tally/livekit';
import type { NodeWorkers } from '@tally/nodes';
import type { FinaliseQueue, PassthroughEgresses, RecordingLifecycle } from '@tally/recordings';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { MediaStopper } from '../reconcile/media-stopper.js';
import { EgressReconciler } from './egress-reconciler.service.js';
import { EgressStopRequests, STOP_PATIENCE_S } from './egress-stop-requests.js';

/** Redis's SET … EX and MGET, on a clock the test moves. */
class ExpiringStore {
  nowMs = 0;
  private readonly values = new Map<string, { value: string; untilMs: number }>();

  set(key: string, value: string, _ex: 'EX', seconds: number): Promise<'OK'> {
    this.values.set(key, { value, untilMs: this.nowMs + seconds * 1000 });
    return Promise.resolve('OK');
  }

  mget(keys: string[]): Promise<(string | null)[]> {
    return Promise.resolve(
      keys.map((k) => {
        const entry = this.values.get(k);
        return entry && entry.untilMs > this.nowMs ? entry.value : null;
      }),
    );
  }
}

/** An egress of a recording that is over: LiveKit still lists it STARTING, and its stop never gets an answer. */
const ghost: EgressSummary = {
  egressId: 'EG_ghost',
  room: 'app_gone.str_gone',
  requestedPath: undefined,
  state: 'starting',
  error: undefined,
  startedAt: undefined,
  endedAt: undefined,
  file: undefined,
};

function setup() {
  const store = new ExpiringStore();
  const stopsAsked: string[] = [];
  const egress = {
    list: () => Promise.resolve([ghost]),
    stop: (id: string) => {
      stopsAsked.push(id);
      return Promise.reject(new Error('twirp error deadline_exceeded: request timed out'));
    },
  } as unknown as LivekitEgressClient;
  const prisma = {
    recording: { findMany: () => Promise.resolve([]) },
    recordingEgress: { findMany: () => Promise.resolve([]) },
    hlsSession: { findUnique: () => Promise.resolve(null) },
  } as unknown as PrismaService;
  const stops = new EgressStopRequests(store as unknown as Pick<Redis, 'set' | 'mget'>);
  const sut = new EgressReconciler(
    prisma,
    egress,
    {} as RecordingLifecycle,
    {} as FinaliseQueue,
    {} as CapacityLedger,
    {} as Admitter,
    {} as PassthroughEgresses,
    stops,
  );
  const sweep = () => sut.run(new Date(store.nowMs));
  const teardown = new MediaStopper({} as LivekitRoomClient, egress, {} as LivekitIngressClient, {} as NodeWorkers, stops);
  return { store, stopsAsked, sweep, teardown };
}

describe('EgressReconciler and egresses already being stopped', () => {
  it('stops a ghost egress once, leaves it to finish on the next sweeps, and asks again only after the patience is over', async () => {
    const { store, stopsAsked, sweep } = setup();
    store.nowMs = Date.parse('2026-01-01T00:00:00Z');
    await sweep();
    expect(stopsAsked).toEqual(['EG_ghost']);
    store.nowMs += 30_000;
    await sweep();
    store.nowMs += 30_000;
    await sweep();
    expect(stopsAsked).toEqual(['EG_ghost']);
    store.nowMs += STOP_PATIENCE_S * 1000;
    await sweep();
    expect(stopsAsked).toEqual(['EG_ghost', 'EG_ghost']);
  });

  it('leaves alone a ghost the app teardown has just asked to stop', async () => {
    const { store, stopsAsked, sweep, teardown } = setup();
    store.nowMs = Date.parse('2026-01-01T00:00:00Z');
    await teardown.stopEgress('EG_ghost', new Date(store.nowMs));
    store.nowMs += 30_000;
    const report = await sweep();
    expect(stopsAsked).toEqual(['EG_ghost']);
    expect(report.ghostEgressesStopped).toBe(0);
  });
});
