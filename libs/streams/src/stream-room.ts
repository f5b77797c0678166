/** LiveKit room of a stream: derived from immutable ids only, never from free text. */
export function roomName(appId: string, streamId: string): string {
  return `${appId}.${streamId}`;
}

/** The name of every stream's room (`{appId}.{streamId}`); other rooms are not Tally's streams. */
export const STREAM_ROOM = /^app_[a-z0-9]{16}\.str_[a-z0-9]{16}$/;
