import type { Config } from '@tally/config';
import type { LivekitRoomClient } from '@tally/livekit';
import { describe, expect, it } from 'vitest';
import { StreamRooms } from './stream-rooms.js';

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
  } as unknown as LivekitRoomClient;
  const config = { streams: { joinTimeoutS: 60 } } as Config;
  return { rooms, calls, replica: () => new StreamRooms(livekit, config) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('StreamRooms', () => {
  it('answers before LiveKit has created the room, and lets nobody in until it has', async () => {
    const t = setup();
    const sut = t.replica();

    await sut.open('room_a', () => Promise.resolve());
    let ready = false;
    const waiting = sut.ready('room_a').then(() => (ready = true));
    await settle();

    expect(t.rooms.has('room_a')).toBe(false);
    expect(ready).toBe(false);
    t.calls[0]!.answer();
    await waiting;
    expect(t.rooms.has('room_a')).toBe(true);
    await sut.ready('room_a');
    expect(t.calls).toHaveLength(1);
  });

  it('on a replica that did not create the room, asks LiveKit once for everyone waiting, then knows it', async () => {
    const t = setup();
    const other = t.replica();

    const waits = [other.ready('room_b'), other.ready('room_b'), other.ready('room_b')];
    await settle();
    expect(t.calls.map((c) => c.room)).toEqual(['room_b']);
    t.calls[0]!.answer();
    await Promise.all(waits);
    await other.ready('room_b');

    expect(t.calls).toHaveLength(1);
    expect(t.rooms.has('room_b')).toBe(true);
  });

  it('ends the stream when LiveKit cannot create the room, and refuses those waiting for it', async () => {
    const t = setup();
    const sut = t.replica();
    const failures: unknown[] = [];

    await sut.open('room_c', (error) => {
      failures.push(error);
      return Promise.resolve();
    });
    const waiting = sut.ready('room_c');
    t.calls[0]!.answer(new Error('livekit down'));

    await expect(waiting).rejects.toThrow('livekit down');
    expect(failures).toHaveLength(1);
    // Nothing is remembered of a failed creation: the next caller asks again.
    const again = sut.ready('room_c');
    await settle();
    expect(t.calls).toHaveLength(2);
    t.calls[1]!.answer();
    await again;
  });

  it('makes a new stream wait for its own room once too many creations are in flight', async () => {
    const t = setup();
    const sut = t.replica();
    for (let i = 0; i < 64; i += 1) await sut.open(`busy_${i}`, () => Promise.resolve());

    let opened = false;
    const opening = sut.open('room_d', () => Promise.resolve()).then(() => (opened = true));
    await settle();

    expect(opened).toBe(false);
    t.calls.find((c) => c.room === 'room_d')!.answer();
    await opening;
    expect(t.rooms.has('room_d')).toBe(true);
  });

  it('waits for a creation in flight before the room is removed', async () => {
    const t = setup();
    const sut = t.replica();
    await sut.open('room_e', () => Promise.resolve());

    let settled = false;
    const settling = sut.settled('room_e').then(() => (settled = true));
    await settle();
    expect(settled).toBe(false);
    t.calls[0]!.answer(new Error('either way'));
    await settling;
  });
});
