import type { CapacityLedger } from '@tally/admission';
import type { Config } from '@tally/config';
import type { PrismaClient, Recording, RecordingEgress } from '@tally/db';
import type { LivekitEgressClient } from '@tally/livekit';
import { PassthroughEgresses, type RecordingLifecycle } from '@tally/recordings';
import type { CameraLifecycle, HlsLifecycle, IngressLifecycle, StreamLifecycle } from '@tally/streams';
import { describe, expect, it } from 'vitest';
import type { AppFiles } from './app-files.js';
import type { AppLeftovers, AppTeardownRepository } from './app-teardown.repository.js';
import { AppTeardown } from './app-teardown.service.js';
import type { MediaStopper } from './media-stopper.js';

const NOW = new Date('2026-01-01T00:00:00Z');

function part(track: RecordingEgress['track'], egressId: string | null, state: string): RecordingEgress {
  return { recordingId: 'rec_1', track, egressId, state } as RecordingEgress;
}

function recording(fields: Partial<Recording>): Recording {
  return { id: 'rec_1', appId: 'app_1', status: 'active', egressId: null, mode: 'passthrough', ...fields } as Recording;
}

/**
 * AppTeardown over one deleted app whose leftovers are `recordings` (a passthrough one's egresses are
 * `parts`); returns the egress ids it asked LiveKit to stop, and the recordings it failed.
 */
async function tearDown(recordings: Recording[], parts: RecordingEgress[] = []): Promise<{ stopped: (string | null)[]; failed: string[] }> {
  const stopped: (string | null)[] = [];
  const failed: string[] = [];
  const leftovers: AppLeftovers = { streams: [], recordings, ladders: [], hls: [], ingresses: [], cameraIds: [] };
  const passthrough = new PassthroughEgresses(
    { recordingEgress: { findMany: () => Promise.resolve(parts) } } as unknown as PrismaClient,
    { stop: (id: string) => Promise.resolve(void stopped.push(id)) } as unknown as LivekitEgressClient,
    {} as RecordingLifecycle,
    {} as Config['recordings'],
  );
  const teardown = new AppTeardown(
    {
      deletedApps: () => Promise.resolve([{ id: 'app_1', deletedAt: NOW }]),
      leftovers: () => Promise.resolve(leftovers),
    } as unknown as AppTeardownRepository,
    {} as StreamLifecycle,
    {} as IngressLifecycle,
    {} as HlsLifecycle,
    {} as CameraLifecycle,
    { fail: (id: string) => Promise.resolve(failed.push(id) > 0) } as unknown as RecordingLifecycle,
    passthrough,
    { list: () => Promise.resolve([]) } as unknown as CapacityLedger,
    { stopEgress: (id: string | null) => Promise.resolve(void stopped.push(id)) } as unknown as MediaStopper,
    {} as AppFiles,
    { apps: { retentionS: 3600 } } as Config,
  );
  await teardown.run(NOW);
  return { stopped, failed };
}

describe(AppTeardown.name, () => {
  it("stops each running track egress of a deleted app's passthrough recording, not only the room's", async () => {
    const { stopped, failed } = await tearDown(
      [recording({})],
      [part('video', 'EG_video', 'active'), part('audio', 'EG_audio', 'starting')],
    );
    expect(stopped.sort()).toEqual(['EG_audio', 'EG_video']);
    expect(failed).toEqual(['rec_1']);
  });

  it('leaves the egresses that already ended, and one never started, alone', async () => {
    const { stopped } = await tearDown([recording({})], [part('video', 'EG_video', 'complete'), part('audio', null, 'starting')]);
    expect(stopped).toEqual([]);
  });

  it('stops the one egress of a composite recording', async () => {
    const { stopped } = await tearDown([recording({ mode: 'room_composite', egressId: 'EG_room' })]);
    expect(stopped).toEqual(['EG_room']);
  });
});
