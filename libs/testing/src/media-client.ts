import {
  AudioFrame,
  AudioSource,
  LocalAudioTrack,
  LocalVideoTrack,
  type RemoteTrack,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
  VideoBufferType,
  VideoFrame,
  VideoSource,
  VideoStream,
} from '@livekit/rtc-node';
import type { StreamToken } from '@tally/contracts';
import type { ApiClient } from './http.js';

const WIDTH = 320;
const HEIGHT = 240;
const SAMPLE_RATE = 48_000;

export type Publisher = Readonly<{ room: Room; stop(): Promise<void> }>;

/** A real LiveKit participant joining with a given token and publishing generated video and audio. */
export async function joinAndPublish(url: string, token: string, options: { video?: boolean } = {}): Promise<Publisher> {
  const room = new Room();
  await room.connect(url, token, { autoSubscribe: false, dynacast: false });
  const video = new VideoSource(WIDTH, HEIGHT);
  const audio = new AudioSource(SAMPLE_RATE, 1);
  if (options.video !== false) {
    await room.localParticipant!.publishTrack(
      LocalVideoTrack.createVideoTrack('camera', video),
      new TrackPublishOptions({ source: TrackSource.SOURCE_CAMERA, simulcast: false }),
    );
  }
  await room.localParticipant!.publishTrack(
    LocalAudioTrack.createAudioTrack('microphone', audio),
    new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
  );
  let frame = 0;
  const videoTimer = setInterval(() => {
    const rgba = new Uint8Array(WIDTH * HEIGHT * 4).fill(frame++ % 255);
    video.captureFrame(new VideoFrame(rgba, WIDTH, HEIGHT, VideoBufferType.RGBA));
  }, 66);
  const samples = SAMPLE_RATE / 100;
  const audioTimer = setInterval(() => {
    const pcm = Int16Array.from({ length: samples }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE)));
    void audio.captureFrame(new AudioFrame(pcm, SAMPLE_RATE, 1, samples)).catch(() => undefined);
  }, 10);
  return {
    room,
    async stop() {
      clearInterval(videoTimer);
      clearInterval(audioTimer);
      await room.disconnect().catch(() => undefined);
    },
  };
}

export type Viewer = Readonly<{ room: Room; tracks: Promise<RemoteTrack[]> }>;

/** Joins; `tracks` resolves once a track of every kind in `kinds` (video and audio by default) is subscribed. */
export async function joinAsViewer(
  url: string,
  token: string,
  kinds: readonly TrackKind[] = [TrackKind.KIND_VIDEO, TrackKind.KIND_AUDIO],
): Promise<Viewer> {
  const room = new Room();
  const subscribed: RemoteTrack[] = [];
  const tracks = new Promise<RemoteTrack[]>((resolve) => {
    room.on(RoomEvent.TrackSubscribed, (track) => {
      subscribed.push(track);
      const got = new Set(subscribed.map((t) => t.kind));
      if (kinds.every((kind) => got.has(kind))) resolve(subscribed);
    });
  });
  await room.connect(url, token, { autoSubscribe: true, dynacast: false });
  return { room, tracks };
}

/**
 * Resolves once a viewer of the stream receives a track of every kind in `kinds`, then leaves.
 * publishTrack returns before the track's media is negotiated; LiveKit lists the track, and a
 * track-based recording or HLS started then includes it, only after that (docs/recordings.md).
 */
export async function tracksUp(
  client: ApiClient,
  appId: string,
  streamId: string,
  kinds: readonly TrackKind[] = [TrackKind.KIND_VIDEO, TrackKind.KIND_AUDIO],
  timeoutMs = 30_000,
): Promise<void> {
  const minted = await client.post<StreamToken>(`/v1/apps/${appId}/streams/${streamId}/tokens`, {
    identity: `tracks-${Date.now()}`,
    role: 'viewer',
  });
  if (minted.status !== 201) throw new Error(`viewer token: ${minted.status} ${JSON.stringify(minted.body)}`);
  const viewer = await joinAsViewer(minted.body.url, minted.body.token, kinds);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a viewer received no ${kinds.join(' + ')} tracks within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([viewer.tracks, late]);
  } finally {
    clearTimeout(timer);
    await viewer.room.disconnect().catch(() => undefined);
  }
}

/** The size of the first decoded frame of a subscribed video track. */
export async function firstVideoFrame(track: RemoteTrack): Promise<{ width: number; height: number }> {
  const reader = new VideoStream(track).getReader();
  const { value } = await reader.read();
  await reader.cancel();
  if (value) return { width: value.frame.width, height: value.frame.height };
  throw new Error('video stream ended without a frame');
}

export function disconnected(room: Room): Promise<unknown> {
  return new Promise((resolve) => room.once(RoomEvent.Disconnected, resolve));
}

export function tryPublishVideo(room: Room): Promise<unknown> {
  return room.localParticipant!.publishTrack(
    LocalVideoTrack.createVideoTrack('sneaky', new VideoSource(WIDTH, HEIGHT)),
    new TrackPublishOptions({ source: TrackSource.SOURCE_CAMERA }),
  );
}
