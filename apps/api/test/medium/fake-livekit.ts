/* eslint-disable @typescript-eslint/require-await -- in-memory stand-ins for async adapters: nothing to wait for */
import type {
  EgressDestination,
  EgressRequest,
  EgressSummary,
  IngressRequest,
  IngressSummary,
  LivekitEgressClient,
  LivekitIngressClient,
  LivekitRoomClient,
  ParticipantSummary,
  RoomSummary,
} from '@tally/livekit';

type Public<T> = { [K in keyof T]: T[K] };

/**
 * LiveKit at its adapters, for service-level tests: rooms, participants, egresses and ingresses live
 * in memory, and `failNext` makes the next call of a kind throw like an unreachable server.
 */
export class FakeLivekit {
  readonly rooms = new Map<string, ParticipantSummary[]>();
  readonly egresses = new Map<string, Readonly<{ request: EgressRequest; destination: EgressDestination }>>();
  readonly ingresses = new Map<string, IngressRequest>();
  private failing = new Set<'rooms' | 'egress' | 'ingress'>();
  private sequence = 0;
  /** Runs inside deleteRoom, before it returns: LiveKit's room_finished webhook may arrive that early. */
  onRoomDeleted: ((name: string) => Promise<void>) | undefined;
  /** Runs inside createRoom once the room exists, before it returns (a stream may end meanwhile). */
  onRoomCreated: ((name: string) => Promise<void>) | undefined;

  failNext(kind: 'rooms' | 'egress' | 'ingress'): void {
    this.failing.add(kind);
  }

  /** A publisher with one video and one audio track joins `room` (`sid`: its session, LiveKit's PA_…). */
  publish(room: string, identity = 'publisher', sid?: string): void {
    const tracks = [
      { sid: `TR_v${++this.sequence}`, kind: 'video', mimeType: 'video/H264' },
      { sid: `TR_a${++this.sequence}`, kind: 'audio', mimeType: 'audio/opus' },
    ] as const;
    this.rooms.set(room, [
      ...(this.rooms.get(room) ?? []),
      { identity, ...(sid === undefined ? {} : { sid }), publishedTracks: tracks.length, tracks },
    ]);
  }

  readonly roomClient: Public<LivekitRoomClient> = {
    createRoom: async (name) => {
      this.check('rooms');
      if (!this.rooms.has(name)) this.rooms.set(name, []);
      await this.onRoomCreated?.(name);
    },
    deleteRoom: async (name) => {
      this.check('rooms');
      this.rooms.delete(name);
      await this.onRoomDeleted?.(name);
    },
    listRooms: async (names) => {
      this.check('rooms');
      return [...this.rooms]
        .filter(([name]) => names === undefined || names.includes(name))
        .map(([name, people]): RoomSummary => ({
          name,
          participants: people.length,
          publishers: people.filter((p) => p.publishedTracks > 0).length,
        }));
    },
    removeParticipant: async (room, identity) => {
      this.check('rooms');
      this.rooms.set(
        room,
        (this.rooms.get(room) ?? []).filter((p) => p.identity !== identity),
      );
    },
    listParticipants: async (room) => {
      this.check('rooms');
      return this.rooms.get(room) ?? [];
    },
  };

  readonly egressClient: Public<LivekitEgressClient> = {
    start: async (request, destination) => {
      this.check('egress');
      const egressId = `EG_${++this.sequence}`;
      this.egresses.set(egressId, { request, destination });
      return egressSummary(egressId, request.room, destination.path);
    },
    startSegments: async (request, destination) => {
      this.check('egress');
      const egressId = `EG_${++this.sequence}`;
      return egressSummary(egressId, request.room, destination.dir);
    },
    stop: async (egressId) => {
      this.check('egress');
      const egress = this.egresses.get(egressId);
      return { ...egressSummary(egressId, egress?.request.room ?? '', undefined), state: 'ending' };
    },
    list: async () => [],
  };

  readonly ingressClient: Public<LivekitIngressClient> = {
    create: async (request) => {
      this.check('ingress');
      const ingressId = `IN_${++this.sequence}`;
      this.ingresses.set(ingressId, request);
      return { ...ingressSummary(ingressId, request), streamKey: `sk_${this.sequence}` };
    },
    delete: async (ingressId) => {
      this.check('ingress');
      this.ingresses.delete(ingressId);
    },
    list: async (options = {}) =>
      [...this.ingresses]
        .filter(
          ([id, r]) =>
            (options.ingressId === undefined || id === options.ingressId) && (options.room === undefined || r.room === options.room),
        )
        .map(([id, r]) => ingressSummary(id, r)),
  };

  private check(kind: 'rooms' | 'egress' | 'ingress'): void {
    if (this.failing.delete(kind)) throw new Error(`connect ECONNREFUSED (fake ${kind})`);
  }
}

function egressSummary(egressId: string, room: string, requestedPath: string | undefined): EgressSummary {
  return { egressId, room, requestedPath, state: 'starting', error: undefined, startedAt: undefined, endedAt: undefined, file: undefined };
}

function ingressSummary(ingressId: string, request: IngressRequest): IngressSummary {
  return {
    ingressId,
    name: request.name,
    room: request.room,
    participantIdentity: request.participantIdentity,
    url: `rtmp://127.0.0.1:1935/x`,
    state: 'inactive',
    error: undefined,
  };
}
