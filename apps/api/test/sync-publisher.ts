import {
  AudioFrame,
  AudioSource,
  LocalAudioTrack,
  LocalVideoTrack,
  Room,
  TrackPublishOptions,
  TrackSource,
  VideoBufferType,
  VideoCodec,
  VideoFrame,
  VideoSource,
} from '@livekit/rtc-node';
import type { Publisher } from './media-client.js';

const WIDTH = 320;
const HEIGHT = 240;
const FPS = 30;
const SAMPLE_RATE = 48_000;
/** 10 ms audio frames; the native source keeps at most this much queued ahead of the wire. */
const FRAME_SAMPLES = SAMPLE_RATE / 100;
const AUDIO_QUEUE_MS = 40;
const BEEP_HZ = 1_000;

export type SyncPublisherOptions = Readonly<{ periodMs?: number; flashMs?: number; codec?: 'vp8' | 'h264' }>;

/**
 * A publisher for lip-sync tests: black video and silence, except that every `periodMs` the video
 * turns white and a 1 kHz beep sounds at the same instant for `flashMs`. Both are driven from the
 * audio: a beep starts in the frame captured now, and the white frames are captured once the
 * audio queued ahead of it has gone out, so the two leave the publisher together.
 */
export async function joinAndPublishSync(url: string, token: string, options: SyncPublisherOptions = {}): Promise<Publisher> {
  const periodMs = options.periodMs ?? 1_500;
  const flashMs = options.flashMs ?? 200;
  const room = new Room();
  await room.connect(url, token, { autoSubscribe: false, dynacast: false });
  const video = new VideoSource(WIDTH, HEIGHT);
  const audio = new AudioSource(SAMPLE_RATE, 1, AUDIO_QUEUE_MS);
  const videoOptions = new TrackPublishOptions({ source: TrackSource.SOURCE_CAMERA, simulcast: false });
  if (options.codec === 'h264') videoOptions.videoCodec = VideoCodec.H264;
  await room.localParticipant!.publishTrack(LocalVideoTrack.createVideoTrack('camera', video), videoOptions);
  await room.localParticipant!.publishTrack(
    LocalAudioTrack.createAudioTrack('microphone', audio),
    new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
  );

  // The bottom quarter is noise, so the video has a camera-like bitrate (a flat frame compresses to
  // almost nothing); the rest is black, or white during a flash.
  const noisy = (base: number) =>
    Array.from({ length: 8 }, () => {
      const rgba = new Uint8Array(WIDTH * HEIGHT * 4).fill(base);
      for (let i = (WIDTH * HEIGHT * 3) / 4; i < WIDTH * HEIGHT; i++) rgba.fill(Math.floor(Math.random() * 256), i * 4, i * 4 + 3);
      return rgba;
    });
  const black = noisy(0);
  const white = noisy(255);
  let whiteUntil = 0;
  let frameNo = 0;
  const videoTimer = setInterval(() => {
    const frames = Date.now() < whiteUntil ? white : black;
    video.captureFrame(new VideoFrame(frames[frameNo++ % frames.length]!, WIDTH, HEIGHT, VideoBufferType.RGBA));
  }, 1000 / FPS);

  let running = true;
  const audioLoop = (async () => {
    const beepFrames = flashMs / 10;
    const periodFrames = periodMs / 10;
    for (let n = 0; running; n++) {
      const inPeriod = n % periodFrames;
      const beeping = inPeriod < beepFrames;
      const pcm = new Int16Array(FRAME_SAMPLES);
      if (beeping) {
        for (let i = 0; i < FRAME_SAMPLES; i++)
          pcm[i] = Math.round(12_000 * Math.sin((2 * Math.PI * BEEP_HZ * (n * FRAME_SAMPLES + i)) / SAMPLE_RATE));
      }
      if (inPeriod === 0) {
        // The frame just handed over goes out after what is already queued.
        const delay = audio.queuedDuration;
        setTimeout(() => {
          whiteUntil = Date.now() + flashMs;
          video.captureFrame(new VideoFrame(white[0]!, WIDTH, HEIGHT, VideoBufferType.RGBA));
        }, delay);
      }
      await audio.captureFrame(new AudioFrame(pcm, SAMPLE_RATE, 1, FRAME_SAMPLES)).catch(() => undefined);
    }
  })();

  return {
    room,
    async stop() {
      running = false;
      clearInterval(videoTimer);
      await audioLoop;
      await room.disconnect().catch(() => undefined);
    },
  };
}
