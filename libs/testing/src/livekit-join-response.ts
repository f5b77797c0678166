import { SignalResponse } from '@livekit/protocol';
import { WebSocket } from 'ws';

export type IceServer = Readonly<{ urls: string[]; username: string; credential: string }>;

/**
 * The ICE servers LiveKit's join response hands a client connecting with `token` to the
 * livekit-server at `url` (ws:// or http://), as every LiveKit client reads them.
 */
export async function iceServersFromJoin(url: string, token: string): Promise<IceServer[]> {
  const base = url.replace(/^http/, 'ws').replace(/\/+$/, '');
  const socket = new WebSocket(`${base}/rtc?access_token=${encodeURIComponent(token)}&auto_subscribe=1&sdk=js&protocol=15`);
  try {
    return await new Promise<IceServer[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no join response from LiveKit within 60 s')), 60_000);
      socket.on('error', reject);
      socket.on('message', (data: Buffer) => {
        const response = SignalResponse.fromBinary(new Uint8Array(data));
        if (response.message.case !== 'join') return;
        clearTimeout(timer);
        resolve(response.message.value.iceServers.map((s) => ({ urls: s.urls, username: s.username, credential: s.credential })));
      });
    });
  } finally {
    socket.close();
  }
}
