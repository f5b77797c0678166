import { NodeRegistry } from '@tally/nodes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MediumApi, startMediumApi } from '../../test/medium/medium-harness.js';
import { AppsService } from '../apps/apps.service.js';
import { DomainError, LimitRefusedError } from '../common/domain-error.js';
import { StreamsService } from '../streams/streams.service.js';
import { IngressesService } from './ingresses.service.js';

describe(IngressesService.name, () => {
  let api: MediumApi;
  let sut: IngressesService;

  beforeAll(async () => {
    api = await startMediumApi();
    sut = api.get(IngressesService);
  });
  afterAll(() => api?.stop());

  const streamOf = async (maxIngresses: number) => {
    const apps = api.get(AppsService);
    const app = await apps.update((await apps.create({ name: 'ingest' })).id, { quotas: { maxIngresses } }, { kind: 'admin' });
    return { appId: app.id, stream: await api.get(StreamsService).create(app.id, { name: 'show' }) };
  };

  it('creates a transcoding RTMP endpoint into the stream’s room and shows its key once', async () => {
    const { appId, stream } = await streamOf(1);

    const created = await sut.create(appId, { streamId: stream.id, kind: 'rtmp' });

    expect(created).toMatchObject({ streamId: stream.id, kind: 'rtmp', transcode: true, status: 'inactive' });
    expect(created.streamKey).toMatch(/^sk_/);
    expect([...api.livekit.ingresses.values()].find((r) => r.name === created.id)).toMatchObject({ room: stream.room, kind: 'rtmp' });
    expect(await sut.get(appId, created.id)).not.toHaveProperty('streamKey');
  });

  it('refuses RTMP without transcoding, naming the field', async () => {
    const { appId, stream } = await streamOf(1);

    const refused = await sut.create(appId, { streamId: stream.id, kind: 'rtmp', transcode: false }).catch((e: unknown) => e);

    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'validation_failed', details: { field: 'transcode' } });
  });

  it('refuses over app.ingresses, and a deleted ingress gives its place back', async () => {
    const { appId, stream } = await streamOf(1);
    const first = await sut.create(appId, { streamId: stream.id, kind: 'whip' });

    const refused = await sut.create(appId, { streamId: stream.id, kind: 'whip' }).catch((e: unknown) => e);
    await sut.delete(appId, first.id);
    const again = await sut.create(appId, { streamId: stream.id, kind: 'whip' });

    expect(refused).toBeInstanceOf(LimitRefusedError);
    expect((refused as LimitRefusedError).limit).toMatchObject({ resource: 'app.ingresses', limit: 1 });
    expect((await sut.get(appId, first.id)).status).toBe('ended');
    expect([...api.livekit.ingresses.values()].map((r) => r.name)).not.toContain(first.id);
    expect(again.transcode).toBe(false);
  });

  it('hands out the URLs of the node the ingress was admitted on, as its agent reports them, else LiveKit’s', async () => {
    const { appId, stream } = await streamOf(3);
    const registry = api.get(NodeRegistry);
    const { status: _status, ...heartbeat } = (await registry.get(api.nodeId))!;
    const reported = { rtmpUrl: 'rtmp://10.20.0.7:1936/x', whipUrl: 'http://10.20.0.7:8086/w' };

    const beforeReport = await sut.create(appId, { streamId: stream.id, kind: 'rtmp' });
    await registry.heartbeat({ ...heartbeat, ingress: reported }, 600);
    const rtmp = await sut.create(appId, { streamId: stream.id, kind: 'rtmp' });
    const whip = await sut.create(appId, { streamId: stream.id, kind: 'whip' });
    await registry.heartbeat(heartbeat, 600);

    expect(beforeReport.url).toBe('rtmp://127.0.0.1:1935/x');
    expect(rtmp.url).toBe(reported.rtmpUrl);
    expect(whip.url).toBe(reported.whipUrl);
    expect((await sut.get(appId, whip.id)).url).toBe(reported.whipUrl);
  });
});
