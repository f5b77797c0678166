import type { WebSocket } from 'ws';

type Receiver = { _maxPayload?: unknown };

/**
 * Caps the size of the messages `ws` accepts on this one connection (the server's maxPayload is one
 * figure for every route). ws checks the cap as each frame's header arrives, before buffering its
 * payload, and closes with 1009 (message too big). ws has no public per-connection setting, so this
 * sets its receiver's limit; message-limit.spec.ts fails if a ws upgrade moves it.
 */
export function limitIncomingMessages(ws: WebSocket, maxBytes: number): void {
  const receiver = (ws as unknown as { _receiver?: Receiver })._receiver;
  if (receiver === undefined || typeof receiver._maxPayload !== 'number') {
    throw new Error('ws no longer exposes its receiver message limit: see apps/api/src/common/message-limit.ts');
  }
  receiver._maxPayload = maxBytes;
}
