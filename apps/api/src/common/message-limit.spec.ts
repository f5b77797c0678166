import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { limitIncomingMessages } from './message-limit.js';

describe(limitIncomingMessages.name, () => {
  let server: WebSocketServer;
  const received: number[] = [];

  beforeAll(async () => {
    server = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: 4 * 1024 * 1024 });
    server.on('connection', (ws) => {
      limitIncomingMessages(ws, 1024);
      ws.on('message', (data: Buffer) => received.push(data.length));
      ws.on('error', () => {});
    });
    await new Promise((resolve) => server.once('listening', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('closes a connection with 1009 for a message over its own cap, after accepting one within it', async () => {
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    await new Promise((resolve) => client.once('open', resolve));
    const closed = new Promise<number>((resolve) => client.once('close', (code) => resolve(code)));
    client.send(Buffer.alloc(1024));
    client.send(Buffer.alloc(64 * 1024));
    expect(await closed).toBe(1009);
    expect(received).toEqual([1024]);
  });
});
