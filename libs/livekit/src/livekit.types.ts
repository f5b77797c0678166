export type LivekitCredentials = Readonly<{ url: string; apiKey: string; apiSecret: string }>;

export type ParticipantSummary = Readonly<{
  identity: string;
  /** Tracks this participant currently publishes. */
  publishedTracks: number;
}>;

export type RoomSummary = Readonly<{ name: string; participants: number; publishers: number }>;

/** The part of a LiveKit webhook event Tally acts on. */
export type LivekitEvent = Readonly<{
  id: string;
  /** LiveKit may add event names; unknown ones are ignored. */
  event: string;
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
