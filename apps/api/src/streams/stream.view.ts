/** The row → view mapping is shared with the worker, which emits stream events too. */
export { toStreamView } from '@tally/webhooks';

/** LiveKit room of a stream: derived from immutable ids only, never from free text. */
export function roomName(appId: string, streamId: string): string {
  return `${appId}.${streamId}`;
}
