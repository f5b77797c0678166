import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MediumApi, startMediumApi } from '../../test/medium/medium-harness.js';
import { AppsService } from '../apps/apps.service.js';
import { newId } from '../common/ids.js';
import { StreamsRepository } from './streams.repository.js';

describe(StreamsRepository.name, () => {
  let api: MediumApi;
  let sut: StreamsRepository;

  beforeAll(async () => {
    api = await startMediumApi();
    sut = api.get(StreamsRepository);
  });
  afterAll(() => api?.stop());

  const row = (appId: string, name: string, id = newId('str')) => ({ id, appId, name, room: `${appId}.${id}`, createdAt: new Date() });

  it('commits every one of many concurrent creates, each readable once its create resolved', async () => {
    const app = await api.get(AppsService).create({ name: 'grouped' });
    const rows = Array.from({ length: 300 }, (_, i) => row(app.id, `s${i}`));

    const created = await Promise.all(rows.map((r) => sut.create(r)));

    expect(created.map((s) => s.id)).toEqual(rows.map((r) => r.id));
    expect((await sut.listOpen(app.id)).map((s) => s.id).sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it('fails only the create whose row cannot be written when it arrives with others', async () => {
    const app = await api.get(AppsService).create({ name: 'one bad row' });
    const taken = row(app.id, 'first');
    await sut.create(taken);
    const good = Array.from({ length: 20 }, (_, i) => row(app.id, `g${i}`));
    const clash = row(app.id, 'same id', taken.id);

    const outcomes = await Promise.allSettled([...good.slice(0, 10), clash, ...good.slice(10)].map((r) => sut.create(r)));

    const fulfilled = (n: number): string[] => Array.from({ length: n }, () => 'fulfilled');
    expect(outcomes.map((o) => o.status)).toEqual([...fulfilled(10), 'rejected', ...fulfilled(10)]);
    const open = await sut.listOpen(app.id);
    expect(open.map((s) => s.id).sort()).toEqual([taken.id, ...good.map((r) => r.id)].sort());
    expect(open.find((s) => s.id === taken.id)?.name).toBe('first');
  });
});
