import { PrismaService } from '@tally/db';
import { createTestDatabase } from '@tally/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { type ClaimSlots, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

const LEASE_MS = 60_000;
const slots = (cap: number, running: Record<string, number> = {}): ClaimSlots => ({ cap, running: new Map(Object.entries(running)) });

describe(`${WebhookDeliveriesRepository.name} claims`, () => {
  let prisma: PrismaService;
  let other: PrismaService;
  let sut: WebhookDeliveriesRepository;
  let otherWorker: WebhookDeliveriesRepository;
  let seq = 0;

  /** `count` pending deliveries of `appId`, due `dueInMs` from now (negative: overdue, oldest first). */
  const pending = async (appId: string, count: number, dueInMs = -60_000, status: 'pending' | 'dead' = 'pending') => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      seq += 1;
      const eventId = `evt_claim_${String(seq).padStart(6, '0')}`;
      const id = `dlv_claim_${String(seq).padStart(6, '0')}`;
      await prisma.webhookEvent.create({ data: { id: eventId, appId, type: 'stream.ended', payload: { id: eventId, n: seq } } });
      await prisma.webhookDelivery.create({
        data: { id, appId, eventId, url: `http://127.0.0.1:9/${appId}`, status, nextAttemptAt: new Date(Date.now() + dueInMs + i) },
      });
      ids.push(id);
    }
    return ids;
  };

  beforeAll(async () => {
    const url = await createTestDatabase(inject('postgresUrl'));
    prisma = new PrismaService(url);
    other = new PrismaService(url);
    sut = new WebhookDeliveriesRepository(prisma);
    otherWorker = new WebhookDeliveriesRepository(other);
    for (const id of ['app_claima0000000000', 'app_claimb0000000000']) {
      await prisma.app.create({ data: { id, name: id, webhookSecret: `sealed-${id}` } });
    }
  });
  beforeEach(async () => {
    await prisma.webhookEvent.deleteMany({});
  });
  afterAll(async () => {
    await other?.$disconnect();
    await prisma?.$disconnect();
  });

  it("claims each app's due deliveries up to its free slots, oldest first, with the event body and the app's secret", async () => {
    const a = await pending('app_claima0000000000', 10);
    const b = await pending('app_claimb0000000000', 3);
    const failingSince = new Date('2026-11-20T10:11:12.345Z');
    await prisma.app.update({ where: { id: 'app_claimb0000000000' }, data: { webhookFailingSince: failingSince } });

    const first = await sut.claim('worker-1', slots(4), LEASE_MS);
    // App A is at its cap (4 running here): only app B's last delivery and nothing more of A.
    const second = await sut.claim('worker-1', slots(4, { app_claima0000000000: 4, app_claimb0000000000: 3 }), LEASE_MS);
    const third = await sut.claim('worker-1', slots(4, { app_claima0000000000: 3 }), LEASE_MS);

    expect(first.map((d) => d.id).sort()).toEqual([...a.slice(0, 4), ...b].sort());
    expect(second).toEqual([]);
    expect(third.map((d) => d.id)).toEqual([a[4]]);
    const claimed = first.find((d) => d.id === b[0])!;
    expect(claimed).toMatchObject({
      appId: 'app_claimb0000000000',
      attempts: 0,
      eventType: 'stream.ended',
      sealedSecret: 'sealed-app_claimb0000000000',
    });
    expect(JSON.parse(claimed.body)).toMatchObject({ id: claimed.eventId });
    expect([claimed.failingSince, claimed.disabledAt, first.find((d) => d.id === a[0])!.failingSince]).toEqual([failingSince, null, null]);
  });

  it('never claims a delivery that is not due, not pending, or under a live lease of another worker', async () => {
    await pending('app_claima0000000000', 2, 60_000);
    await pending('app_claima0000000000', 2, -60_000, 'dead');
    const leased = await pending('app_claimb0000000000', 2);
    expect((await otherWorker.claim('worker-2', slots(16), LEASE_MS)).map((d) => d.id).sort()).toEqual(leased);

    expect(await sut.claim('worker-1', slots(16), LEASE_MS)).toEqual([]);
  });

  it("takes over a dead worker's claims once their lease lapses; a live worker's renewed claims stay its own", async () => {
    const dead = await pending('app_claima0000000000', 3);
    const alive = await pending('app_claimb0000000000', 3);
    await otherWorker.claim('dead-worker', slots(16, { app_claimb0000000000: 16 }), 300);
    await otherWorker.claim('live-worker', slots(16, { app_claima0000000000: 16 }), 300);

    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await otherWorker.renew('live-worker', alive, 5_000)).toBe(3);
    // A renewal names its owner: another worker's claims are not extended by it.
    expect(await sut.renew('not-the-owner', dead, 5_000)).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const taken = await sut.claim('worker-1', slots(16), LEASE_MS);
    expect(taken.map((d) => d.id).sort()).toEqual(dead);
    const rows = await prisma.webhookDelivery.findMany({ where: { id: { in: dead } } });
    expect(rows.every((r) => r.leaseOwner === 'worker-1')).toBe(true);
  });

  it('gives leases back on release and ends them with the outcome', async () => {
    const [released, delivered, failed] = await pending('app_claima0000000000', 3);
    await sut.claim('worker-1', slots(16), LEASE_MS);

    expect(await sut.release('worker-1', [released!])).toBe(1);
    await sut.recordDelivered(delivered!, { at: new Date(), statusCode: 204, error: null });
    await sut.recordFailed(failed!, { at: new Date(), statusCode: 503, error: 'HTTP 503' }, new Date(Date.now() - 1));

    const rows = await prisma.webhookDelivery.findMany({ where: { appId: 'app_claima0000000000' }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => [r.status, r.attempts, r.leaseOwner, r.leasedUntil])).toEqual([
      ['pending', 0, null, null],
      ['delivered', 1, null, null],
      ['pending', 1, null, null],
    ]);
    // Both pending ones are claimable again at once (the failed one's retry is due).
    expect((await otherWorker.claim('worker-2', slots(16), LEASE_MS)).map((d) => d.id).sort()).toEqual([released, failed].sort());
  });

  it('marks the successes waiting for their batch in the next claim, and claims none of them', async () => {
    const [done, next] = await pending('app_claima0000000000', 2);
    await sut.claim('worker-1', slots(1), LEASE_MS);

    const marked = sut.recordDelivered(done!, { at: new Date(), statusCode: 204, error: null });
    const claimed = await sut.claim('worker-1', slots(1), LEASE_MS);
    await marked;

    expect(claimed.map((d) => d.id)).toEqual([next]);
    const row = await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: done! } });
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 204, leaseOwner: null });
  });

  it('never gives one delivery to two workers claiming at the same time', async () => {
    const all = await pending('app_claima0000000000', 150);
    await pending('app_claimb0000000000', 150).then((ids) => all.push(...ids));

    const seen: string[] = [];
    const drain = async (repository: WebhookDeliveriesRepository, owner: string) => {
      for (let round = 0; round < 40; round += 1) {
        const claimed = await repository.claim(owner, slots(10), LEASE_MS);
        seen.push(...claimed.map((d) => d.id));
        // Each round's claims are finished before the next, as attempts would be.
        await Promise.all(claimed.map((d) => repository.recordDelivered(d.id, { at: new Date(), statusCode: 200, error: null })));
      }
    };
    await Promise.all([drain(sut, 'worker-1'), drain(otherWorker, 'worker-2')]);

    expect(seen.length).toBe(new Set(seen).size);
    expect(seen.sort()).toEqual(all.sort());
  });
});
