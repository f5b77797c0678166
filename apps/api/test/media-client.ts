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

/** Joins and resolves once a video and an audio track are subscribed. */
export async function joinAsViewer(url: string, token: string): Promise<Viewer> {
  const room = new Room();
  const subscribed: RemoteTrack[] = [];
  const tracks = new Promise<RemoteTrack[]>((resolve) => {
    room.on(RoomEvent.TrackSubscribed, (track) => {
      subscribed.push(track);
      const kinds = new Set(subscribed.map((t) => t.kind));
      if (kinds.has(TrackKind.KIND_VIDEO) && kinds.has(TrackKind.KIND_AUDIO)) resolve(subscribed);
    });
  });
  await room.connect(url, token, { autoSubscribe: true, dynacast: false });
  return { room, tracks };
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
