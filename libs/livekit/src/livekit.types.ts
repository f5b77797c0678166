export type LivekitCredentials = Readonly<{ url: string; apiKey: string; apiSecret: string }>;

export type PublishedTrack = Readonly<{ sid: string; kind: 'audio' | 'video'; mimeType: string }>;

export type ParticipantSummary = Readonly<{
  identity: string;
  /** LiveKit's id of this session of the participant (a rejoin gets a new one). */
  sid?: string;
  /** Tracks this participant currently publishes. */
  publishedTracks: number;
  tracks: readonly PublishedTrack[];
}>;

export type EgressState = 'starting' | 'active' | 'ending' | 'complete' | 'failed' | 'aborted' | 'limit_reached';

/** What Tally reads from LiveKit's EgressInfo. */
export type EgressSummary = Readonly<{
  egressId: string;
  room: string;
  /** The path or object key the egress was asked to write (names the recording it belongs to). */
  requestedPath: string | undefined;
  state: EgressState;
  /** LiveKit's error text for failed / aborted egresses. */
  error: string | undefined;
  startedAt: Date | undefined;
  endedAt: Date | undefined;
  /**
   * The output file, once egress knows it: where it is, seconds, bytes, and when its first sample
   * arrived (`mediaStartedAt`, egress's clock: for a Track egress the instant its file's timestamp 0
   * stands for; `startedAt` above is when the egress pipeline began, before any media).
   */
  file: Readonly<{ location: string; durationS: number; sizeBytes: number; mediaStartedAt: Date | undefined }> | undefined;
}>;

/**
 * Where an egress writes: always a file on the egress host. With object storage on, Tally uploads
 * the finished file itself, so no storage credential is ever part of an egress request.
 */
export type EgressDestination = Readonly<{ kind: 'file'; path: string }>;

export type EgressRequest =
  | Readonly<{ mode: 'track_composite'; room: string; videoTrackSid: string | undefined; audioTrackSid: string | undefined }>
  | Readonly<{ mode: 'track'; room: string; trackSid: string }>
  | Readonly<{ mode: 'room_composite'; room: string; layout: string }>;

/** Live HLS into a local directory: `index.m3u8` (every segment) and `live.m3u8` (a sliding window). */
export type SegmentsDestination = Readonly<{ dir: string; segmentS: number }>;

export type IngressState = 'inactive' | 'buffering' | 'publishing' | 'error' | 'complete';

/** What Tally reads from LiveKit's IngressInfo (the stream key is left out on purpose). */
export type IngressSummary = Readonly<{
  ingressId: string;
  /** Tally names each ingress after its own id (`ing_…`). */
  name: string;
  room: string;
  participantIdentity: string;
  /** Where the encoder pushes (without the stream key). */
  url: string;
  state: IngressState;
  /** LiveKit's error text when the state is `error`. */
  error: string | undefined;
  /** When the current (or last) publishing session began and ended, LiveKit's clock. */
  startedAt?: Date | undefined;
  endedAt?: Date | undefined;
}>;

export type IngressRequest = Readonly<{
  kind: 'rtmp' | 'whip';
  name: string;
  room: string;
  participantIdentity: string;
  participantName: string;
  /** WHIP only: false forwards the publisher's tracks as they are (RTMP always transcodes). */
  transcode: boolean;
}>;

export type RoomSummary = Readonly<{ name: string; participants: number; publishers: number }>;

/** The part of a LiveKit webhook event Tally acts on. */
export type LivekitEvent = Readonly<{
  id: string;
  /** LiveKit may add event names; unknown ones are ignored. */
  event: string;
  room: string | undefined;
  participantIdentity: string | undefined;
  /** Set on egress_started / egress_updated / egress_ended. */
  egress: EgressSummary | undefined;
  /** Set on ingress_started / ingress_ended. */
  ingress: IngressSummary | undefined;
  /** Set on participant events: the participant the event is about. */
  participant?: EventParticipant | undefined;
  createdAt: Date;
}>;

/** A participant as a webhook describes it: enough to meter its time in the room. */
export type EventParticipant = Readonly<{
  sid: string;
  identity: string;
  /** Egress and ingress join rooms as participants of their own kinds. */
  kind: 'standard' | 'egress' | 'ingress' | 'other';
  canPublish: boolean;
  /** When LiveKit let it in (milliseconds where the server reports them). */
  joinedAt: Date | undefined;
}>;

export type JoinGrant = Readonly<{
  room: string;
  identity: string;
  name: string | undefined;
  canPublish: boolean;
  ttlSeconds: number;
}>;
