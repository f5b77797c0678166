export type LivekitCredentials = Readonly<{ url: string; apiKey: string; apiSecret: string }>;

export type ParticipantSummary = Readonly<{
  identity: string;
  /** Tracks this participant currently publishes. */
  publishedTracks: number;
}>;

export type RoomSummary = Readonly<{ name: string; participants: number; publishers: number }>;

export type LivekitEventName =
  | 'room_started'
  | 'room_finished'
  | 'participant_joined'
  | 'participant_left'
  | 'participant_connection_aborted'
  | 'track_published'
  | 'track_unpublished'
  | 'egress_started'
  | 'egress_updated'
  | 'egress_ended'
  | 'ingress_started'
  | 'ingress_ended';

/** The part of a LiveKit webhook event Tally acts on. */
export type LivekitEvent = Readonly<{
  id: string;
  event: LivekitEventName | string;
  room: string | undefined;
  participantIdentity: string | undefined;
  createdAt: Date;
}>;

export type JoinGrant = Readonly<{
  room: string;
  identity: string;
  name: string | undefined;
  canPublish: boolean;
  ttlSeconds: number;
}>;
