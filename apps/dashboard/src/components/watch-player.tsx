import { type ReactNode, useEffect, useRef, useState } from 'react';
import type { Api } from '../api/client.js';
import type { StreamToken, StreamView } from '@tally/contracts';
import { ErrorMessage } from './feedback.js';

type WatchState = 'connecting' | 'waiting' | 'playing' | 'disconnected';

const STATE_TEXT: Readonly<Record<WatchState, string>> = {
  connecting: 'Connecting to the room…',
  waiting: 'Connected: waiting for a video track.',
  playing: 'Playing live.',
  disconnected: 'Disconnected from the room.',
};

/**
 * Watches a stream as a viewer: a viewer token from the API (so it counts like any viewer and can
 * never publish), then livekit-client, loaded only now because it is most of the bundle.
 */
export function WatchPlayer({ api, stream, onClose }: { api: Api; stream: StreamView; onClose: () => void }): ReactNode {
  const videoRef = useRef<HTMLVideoElement>(null);
  const audioRef = useRef<HTMLAudioElement>(null);
  const [state, setState] = useState<WatchState>('connecting');
  const [error, setError] = useState<unknown>();
  const [muted, setMuted] = useState(true);

  useEffect(() => {
    let cancelled = false;
    let disconnect: (() => Promise<void>) | undefined;
    const run = async (): Promise<void> => {
      const token = await api.post<StreamToken>(`/v1/apps/${stream.appId}/streams/${stream.id}/tokens`, {
        identity: `dashboard-viewer-${Math.random().toString(36).slice(2, 10)}`,
        role: 'viewer',
        name: 'Dashboard viewer',
      });
      const { Room, RoomEvent, Track } = await import('livekit-client');
      if (cancelled) return;
      const room = new Room({ adaptiveStream: false, dynacast: false });
      disconnect = () => room.disconnect();
      room.on(RoomEvent.TrackSubscribed, (track) => {
        if (track.kind === Track.Kind.Video && videoRef.current) track.attach(videoRef.current);
        if (track.kind === Track.Kind.Audio && audioRef.current) track.attach(audioRef.current);
      });
      room.on(RoomEvent.TrackUnsubscribed, (track) => {
        track.detach();
        if (track.kind === Track.Kind.Video) setState('waiting');
      });
      room.on(RoomEvent.Disconnected, () => {
        if (!cancelled) setState('disconnected');
      });
      await room.connect(token.url, token.token, { autoSubscribe: true });
      if (cancelled) {
        await room.disconnect();
        return;
      }
      setState((s) => (s === 'connecting' ? 'waiting' : s));
    };
    run().catch((e: unknown) => {
      if (!cancelled) setError(e);
    });
    return () => {
      cancelled = true;
      void disconnect?.();
    };
  }, [api, stream.appId, stream.id]);

  useEffect(() => {
    if (audioRef.current) audioRef.current.muted = muted;
  }, [muted]);

  return (
    <section className="panel watch" aria-label={`Watching ${stream.name}`}>
      <div className="panel-header">
        <h3>Watching “{stream.name}”</h3>
        <button type="button" onClick={onClose}>
          Stop watching
        </button>
      </div>
      <ErrorMessage error={error} action="Watching" />
      <video
        ref={videoRef}
        className="video"
        aria-label={`Live video of ${stream.name}`}
        autoPlay
        muted
        playsInline
        onPlaying={() => setState('playing')}
      />
      <audio ref={audioRef} autoPlay muted />
      <div className="row">
        <p role="status" className="muted-text">
          {STATE_TEXT[state]}
        </p>
        <button type="button" onClick={() => setMuted((m) => !m)} aria-pressed={!muted}>
          {muted ? 'Unmute' : 'Mute'}
        </button>
      </div>
    </section>
  );
}
