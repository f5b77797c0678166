import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MediumApi, startMediumApi } from '../../test/medium/medium-harness.js';
import { AppsService } from '../apps/apps.service.js';
import { DomainError, LimitRefusedError, UpstreamUnavailableError } from '../common/domain-error.js';
import { StreamsService } from '../streams/streams.service.js';
import { RecordingsService } from './recordings.service.js';

describe(RecordingsService.name, () => {
  let api: MediumApi;
  let sut: RecordingsService;

  beforeAll(async () => {
    api = await startMediumApi();
    sut = api.get(RecordingsService);
  });
  afterAll(() => api?.stop());

  /** An app limited to `maxRecordings` with one stream whose publisher sends video and audio. */
  const publishedStream = async (maxRecordings: number) => {
    const apps = api.get(AppsService);
    const app = await apps.update((await apps.create({ name: 'recordings' })).id, { quotas: { maxRecordings } }, { kind: 'admin' });
    const stream = await api.get(StreamsService).create(app.id, { name: 'show' });
    api.livekit.publish(stream.room);
    return { appId: app.id, stream };
  };

  it('records the room’s video and audio track as the track composite asked for, and says why', async () => {
    const { appId, stream } = await publishedStream(1);

    const started = await sut.start(appId, stream.id, { mode: 'track_composite' });

    expect(started).toMatchObject({ streamId: stream.id, mode: 'track_composite', status: 'starting' });
    expect(started.reason).not.toBe('');
    const egress = [...api.livekit.egresses.values()].find((e) => e.request.room === stream.room);
    expect(egress?.request.mode).toBe('track_composite');
    expect(await sut.list(appId, {})).toHaveLength(1);
  });

  it('refuses a recording over the app’s limit, naming app.recordings, before asking LiveKit', async () => {
    const { appId, stream } = await publishedStream(0);
    const egresses = api.livekit.egresses.size;

    const refused = await sut.start(appId, stream.id, { mode: 'auto' }).catch((e: unknown) => e);

    expect(refused).toBeInstanceOf(LimitRefusedError);
    expect((refused as LimitRefusedError).limit).toMatchObject({ resource: 'app.recordings', limit: 0 });
    expect(api.livekit.egresses.size).toBe(egresses);
  });

  it('marks the recording failed and frees its place when egress cannot start', async () => {
    const { appId, stream } = await publishedStream(1);
    api.livekit.failNext('egress');

    const failed = await sut.start(appId, stream.id, { mode: 'auto' }).catch((e: unknown) => e);
    const retried = await sut.start(appId, stream.id, { mode: 'auto' });

    expect(failed).toBeInstanceOf(UpstreamUnavailableError);
    expect((await sut.list(appId, {})).map((r) => r.status).sort()).toEqual(['failed', 'starting']);
    expect(retried.status).toBe('starting');
  });

  it('refuses to record an ended stream', async () => {
    const { appId, stream } = await publishedStream(1);
    await api.get(StreamsService).end(appId, stream.id);

    const refused = await sut.start(appId, stream.id, { mode: 'auto' }).catch((e: unknown) => e);

    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'conflict' });
  });
});
