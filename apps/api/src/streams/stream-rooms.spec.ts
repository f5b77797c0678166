import type { Config } from '@tally/config';
import type { LivekitRoomClient } from '@tally/livekit';
import { describe, expect, it } from 'vitest';
import { StreamEndedError, StreamRooms } from './stream-rooms.js';
import type { StreamsRepository } from './streams.repository.js';

/** LiveKit's room service at its adapter: each CreateRoom waits until the test answers it. */
function setup() {
  const rooms = new Set<string>();
  const calls: { room: string; answer: (error?: Error) => void }[] = [];
  const livekit = {
    createRoom: (room: string) =>
      new Promise<void>((resolve, reject) => {
        calls.push({
          room,
          answer: (error) => {
            if (error) return reject(error);
            rooms.add(room);
            resolve();
          },
        });
      }),
    deleteRoom: (room: string) => Promise.resolve(void rooms.delete(room)),
  } as unknown as LivekitRoomClient;
  // Postgres' stream rows, by room: open unless the test ended them.
  const ended = new Set<string>();
  const streams = {
    findByRoom: (room: string) => Promise.resolve({ room, status: ended.has(room) ? 'ended' : 'live' }),
  } as unknown as StreamsRepository;
  const config = { streams: { joinTimeoutS: 60 } } as Config;
  return { rooms, calls, ended, replica: () => new StreamRooms(livekit, streams, config) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe(StreamRooms.name, () => {
  it('creates a room the first time it is needed, once for everyone waiting, and lets nobody in until it exists', async () => {
    const t = setup();
    const sut = t.replica();

    let ready = false;
    const waits = [sut.ready('room_a'), sut.ready('room_a').then(() => (ready = true)), sut.ready('room_a')];
    await settle();

    expect(t.calls.map((c) => c.room)).toEqual(['room_a']);
    expect(ready).toBe(false);
    expect(sut.isReady('room_a')).toBe(false);
    t.calls[0]!.answer();
    await Promise.all(waits);
    expect(t.rooms.has('room_a')).toBe(true);
    expect(sut.isReady('room_a')).toBe(true);
    await sut.ready('room_a');
    expect(t.calls).toHaveLength(1);
  });

  it('asks LiveKit again on a replica that did not create the room, once', async () => {
    const t = setup();
    const first = t.replica();
    const other = t.replica();

    const creating = first.ready('room_b');
    t.calls[0]!.answer();
    await creating;
    const waiting = other.ready('room_b');
    await settle();
    t.calls[1]!.answer();
    await waiting;
    await other.ready('room_b');

    expect(t.calls.map((c) => c.room)).toEqual(['room_b', 'room_b']);
  });

  it('refuses those waiting when LiveKit cannot create the room, and asks again for the next caller', async () => {
    const t = setup();
    const sut = t.replica();

    const waiting = sut.ready('room_c');
    t.calls[0]!.answer(new Error('livekit down'));

    await expect(waiting).rejects.toThrow('livekit down');
    const again = sut.ready('room_c');
    await settle();
    expect(t.calls).toHaveLength(2);
    t.calls[1]!.answer();
    await again;
    expect(t.rooms.has('room_c')).toBe(true);
  });

  it('waits for a creation in flight before the room is removed, and forgets the room', async () => {
    const t = setup();
    const sut = t.replica();
    const creating = sut.ready('room_e');

    let settled = false;
    const settling = sut.settled('room_e').then(() => (settled = true));
    await settle();
    expect(settled).toBe(false);
    t.calls[0]!.answer();
    await Promise.all([creating, settling]);
    // Forgotten: a later need asks LiveKit again rather than trusting a room that was removed.
    void sut.ready('room_e');
    await settle();
    expect(t.calls).toHaveLength(2);
  });

  it('removes a room whose stream ended while LiveKit created it, and refuses everyone waiting on it', async () => {
    const t = setup();
    const sut = t.replica();
    const waits = [sut.ready('room_f'), sut.ready('room_f')];
    await settle();

    t.ended.add('room_f');
    t.calls[0]!.answer();

    for (const wait of waits) await expect(wait).rejects.toBeInstanceOf(StreamEndedError);
    expect(t.rooms.has('room_f')).toBe(false);
  });
});
