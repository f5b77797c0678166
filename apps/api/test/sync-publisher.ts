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
import type { Publisher } from '@tally/testing/media';

/** The picture's sizes: the first until `resize`, then the second (as a simulcast layer switch changes it). */
const SIZES = [
  { width: 320, height: 240 },
  { width: 640, height: 480 },
] as const;
const FPS = 30;
const SAMPLE_RATE = 48_000;
/** 10 ms audio frames; the native source keeps at most this much queued ahead of the wire. */
const FRAME_SAMPLES = SAMPLE_RATE / 100;
/**
 * Deep enough that a busy event loop on a loaded host never lets the queue run dry: the audio's
 * timestamps count samples, so a gap in what is fed goes out as silence and moves every later beep
 * against the picture (200 ms ran dry on a loaded 2-core host: the beeps' RTP times moved 120 ms
 * while the flashes kept theirs, and the flash before the clock estimate caught up missed by 150 ms).
 * A second is rtc-node's default.
 */
const AUDIO_QUEUE_MS = 1_000;
const BEEP_HZ = 1_000;

export type SyncPublisherOptions = Readonly<{
  /**
   * The gaps between one flash and the next, repeated (multiples of 10 ms). Unequal gaps keep a
   * track shifted by a whole gap from passing for one in sync: a shift lines the flashes up with
   * the beeps again only after a whole cycle.
   */
  gapsMs?: readonly number[];
  flashMs?: number;
  codec?: 'vp8' | 'h264';
}>;

/**
 * A publisher for lip-sync tests: black video and silence, except that after each of `gapsMs` in
 * turn the video turns white and a 1 kHz beep sounds at the same instant for `flashMs`. The instant is the same in
 * the media timestamps, not only roughly in wall-clock time: the video frames are stamped on the
 * audio's clock (see below), so a recording that keeps each track's timing shows the flash and the
 * beep together, and any gap it shows is the recorder's.
 */
export type SyncPublisher = Publisher & {
  /** From the next frame on, the picture is 640×480 instead of 320×240: the encoder starts a new stream (new SPS). */
  resize(): void;
};

export async function joinAndPublishSync(url: string, token: string, options: SyncPublisherOptions = {}): Promise<SyncPublisher> {
  const gapsMs = options.gapsMs ?? [1_200, 1_800];
  const cycleMs = gapsMs.reduce((a, b) => a + b, 0);
  /** Where each flash starts within a cycle, in ms. */
  const startsMs = gapsMs.map((_, i) => gapsMs.slice(0, i).reduce((a, b) => a + b, 0));
  const flashMs = options.flashMs ?? 200;
  const room = new Room();
  await room.connect(url, token, { autoSubscribe: false, dynacast: false });
  const video = new VideoSource(SIZES[0].width, SIZES[0].height);
  const audio = new AudioSource(SAMPLE_RATE, 1, AUDIO_QUEUE_MS);
  const videoOptions = new TrackPublishOptions({ source: TrackSource.SOURCE_CAMERA, simulcast: false });
  if (options.codec === 'h264') videoOptions.videoCodec = VideoCodec.H264;
  await room.localParticipant!.publishTrack(LocalVideoTrack.createVideoTrack('camera', video), videoOptions);
  await room.localParticipant!.publishTrack(
    LocalAudioTrack.createAudioTrack('microphone', audio),
    new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }),
  );

  // A strip of noise at the bottom keeps every frame distinct; the rest is black, or white during a
  // flash. The strip is thin on purpose: a bitrate above what the sender's bandwidth estimate allows
  // at first makes libwebrtc drop frames (5–10 fps), and a flash then shows up to 200 ms late.
  const noisy = (base: number, { width, height }: (typeof SIZES)[number]) =>
    Array.from({ length: 8 }, () => {
      const rgba = new Uint8Array(width * height * 4).fill(base);
      for (let i = width * (height - 8); i < width * height; i++) rgba.fill(Math.floor(Math.random() * 256), i * 4, i * 4 + 3);
      return rgba;
    });
  const pictures = SIZES.map((size) => ({ size, black: noisy(0, size), white: noisy(255, size) }));
  let picture = pictures[0]!;
  const frame = (shade: 'black' | 'white') =>
    new VideoFrame(picture[shade][frameNo++ % picture[shade].length]!, picture.size.width, picture.size.height, VideoBufferType.RGBA);

  // One clock for both tracks: the audio's. The native source plays the queued audio out 10 ms at a
  // time, so in steady state audio frame n leaves at `audioZero + n * 10 ms` on the monotonic clock
  // (the one libwebrtc stamps captures with). Frame n is accepted once the queue has room for it, so
  // it leaves about a queue's length after its capture call returns; that is never early, only late
  // (a busy event loop), so the smallest such estimate over the last second is the clock's zero
  // (the first few hundred ms of audio are taken faster than real time, which moves it: hence the
  // sliding window). Every video frame carries its capture time on that clock, and the first white
  // frame of a flash carries the instant its beep starts, however late the timer that captures it
  // fires: the RTP timestamps, and so the sender reports, put the flash and the beep at the same
  // instant whatever the load on the test host.
  const nowUs = () => process.hrtime.bigint() / 1_000n;
  let audioZeroUs: bigint | undefined;
  const cycleUs = BigInt(cycleMs) * 1_000n;
  const flashUs = BigInt(flashMs) * 1_000n;
  let lastStampUs = 0n;
  let frameNo = 0;
  const videoTimer = setInterval(() => {
    const now = nowUs();
    if (audioZeroUs === undefined) {
      lastStampUs = now;
      video.captureFrame(frame('black'), now);
      return;
    }
    const cycleStart = audioZeroUs + ((now - audioZeroUs) / cycleUs) * cycleUs;
    const inCycleMs = Number((now - cycleStart) / 1_000n);
    const flashStart = cycleStart + BigInt(startsMs.filter((start) => start <= inCycleMs).pop() ?? 0) * 1_000n;
    // The flash's first frame is stamped with the beep's start, the rest with their capture time.
    const stamp = flashStart > lastStampUs && lastStampUs > 0n ? flashStart : now;
    lastStampUs = stamp;
    video.captureFrame(frame(stamp - flashStart < flashUs ? 'white' : 'black'), stamp);
  }, 1000 / FPS);

  const zeroes: bigint[] = [];
  let running = true;
  const audioLoop = (async () => {
    const beepFrames = flashMs / 10;
    const cycleFrames = cycleMs / 10;
    const startFrames = startsMs.map((start) => start / 10);
    for (let n = 0; running; n++) {
      const inCycle = n % cycleFrames;
      const beeping = startFrames.some((start) => inCycle >= start && inCycle < start + beepFrames);
      const pcm = new Int16Array(FRAME_SAMPLES);
      if (beeping) {
        for (let i = 0; i < FRAME_SAMPLES; i++)
          pcm[i] = Math.round(12_000 * Math.sin((2 * Math.PI * BEEP_HZ * (n * FRAME_SAMPLES + i)) / SAMPLE_RATE));
      }
      await audio.captureFrame(new AudioFrame(pcm, SAMPLE_RATE, 1, FRAME_SAMPLES)).catch(() => undefined);
      zeroes.push(nowUs() + BigInt(AUDIO_QUEUE_MS - 10) * 1_000n - BigInt(n) * 10_000n);
      if (zeroes.length > 100) zeroes.shift();
      // Flashes start once the estimate has settled (a full window after the queue first filled).
      if (n >= 300) audioZeroUs = zeroes.reduce((a, b) => (b < a ? b : a));
    }
  })();

  return {
    room,
    resize() {
      picture = pictures[1]!;
    },
    async stop() {
      running = false;
      clearInterval(videoTimer);
      await audioLoop;
      await room.disconnect().catch(() => undefined);
    },
  };
}
