import {
  AudioCodec,
  DirectFileOutput,
  EgressClient,
  type EgressInfo,
  EgressStatus,
  EncodedFileOutput,
  EncodedFileType,
  EncodingOptions,
  SegmentedFileOutput,
  SegmentedFileProtocol,
  VideoCodec,
} from 'livekit-server-sdk';
import type {
  EgressDestination,
  EgressRequest,
  EgressState,
  EgressSummary,
  LivekitCredentials,
  SegmentsDestination,
} from './livekit.types.js';

/** Composite output: 720p30 H.264 with AAC audio in MP4, which every browser and player plays. */
const COMPOSITE_ENCODING = new EncodingOptions({
  width: 1280,
  height: 720,
  framerate: 30,
  videoCodec: VideoCodec.H264_MAIN,
  videoBitrate: 3_000,
  audioCodec: AudioCodec.AAC,
  audioBitrate: 128,
  audioFrequency: 48_000,
  keyFrameInterval: 2,
});

/**
 * Where every stop is noted before LiveKit is asked: LiveKit lists an egress as running until egress
 * reports the stop, and the worker's reconciler must not take one already being stopped for a ghost.
 */
export type EgressStopNotes = Readonly<{ asked(egressId: string): Promise<void> }>;

/**
 * The adapter in front of LiveKit's Egress service. Tally's processes get it with their stop notes
 * (RuntimeModule); one made without (a test or a tool standing in for someone else) notes nothing.
 */
export class LivekitEgressClient {
  private readonly client: EgressClient;

  constructor(
    credentials: LivekitCredentials,
    private readonly notes?: EgressStopNotes,
  ) {
    this.client = new EgressClient(credentials.url, credentials.apiKey, credentials.apiSecret);
  }

  async start(request: EgressRequest, destination: EgressDestination): Promise<EgressSummary> {
    switch (request.mode) {
      case 'track_composite': {
        const info = await this.client.startTrackCompositeEgress(request.room, encodedFile(destination), {
          ...(request.audioTrackSid === undefined ? {} : { audioTrackId: request.audioTrackSid }),
          ...(request.videoTrackSid === undefined ? {} : { videoTrackId: request.videoTrackSid }),
          encodingOptions: COMPOSITE_ENCODING,
        });
        return summarise(info);
      }
      case 'room_composite': {
        const info = await this.client.startRoomCompositeEgress(request.room, encodedFile(destination), {
          layout: request.layout,
          encodingOptions: COMPOSITE_ENCODING,
        });
        return summarise(info);
      }
      case 'track': {
        const output = new DirectFileOutput({ filepath: pathOf(destination), disableManifest: true });
        return summarise(await this.client.startTrackEgress(request.room, output, request.trackSid));
      }
    }
  }

  /** Live HLS of one publisher (track-composite) or of the whole room (room-composite), keyframes on segment boundaries. */
  async startSegments(
    request: Extract<EgressRequest, { mode: 'track_composite' | 'room_composite' }> & Readonly<{ videoOnly?: boolean }>,
    destination: SegmentsDestination,
  ): Promise<EgressSummary> {
    const output = new SegmentedFileOutput({
      protocol: SegmentedFileProtocol.HLS_PROTOCOL,
      filenamePrefix: `${destination.dir}/segment`,
      playlistName: `${destination.dir}/index.m3u8`,
      livePlaylistName: `${destination.dir}/live.m3u8`,
      segmentDuration: destination.segmentS,
      disableManifest: true,
    });
    const encodingOptions = new EncodingOptions({ ...COMPOSITE_ENCODING, keyFrameInterval: destination.segmentS });
    const info =
      request.mode === 'track_composite'
        ? await this.client.startTrackCompositeEgress(request.room, output, {
            ...(request.audioTrackSid === undefined ? {} : { audioTrackId: request.audioTrackSid }),
            ...(request.videoTrackSid === undefined ? {} : { videoTrackId: request.videoTrackSid }),
            encodingOptions,
          })
        : await this.client.startRoomCompositeEgress(request.room, output, {
            layout: request.layout,
            encodingOptions,
            ...(request.videoOnly ? { videoOnly: true } : {}),
          });
    return summarise(info);
  }

  /** Noted first, so a sweep between the ask and LiveKit's answer already sees it; a note that fails never holds the stop back. */
  async stop(egressId: string): Promise<EgressSummary> {
    await this.notes?.asked(egressId).catch(() => undefined);
    return summarise(await this.client.stopEgress(egressId));
  }

  /** Egresses LiveKit knows about (all of them, or only those still running). */
  async list(options: { activeOnly: boolean; room?: string }): Promise<EgressSummary[]> {
    const infos = await this.client.listEgress({ active: options.activeOnly, ...(options.room ? { roomName: options.room } : {}) });
    return infos.map(summarise);
  }
}

function encodedFile(destination: EgressDestination): EncodedFileOutput {
  return new EncodedFileOutput({
    fileType: EncodedFileType.MP4,
    filepath: pathOf(destination),
    disableManifest: true,
  });
}

function pathOf(destination: EgressDestination): string {
  return destination.path;
}

const STATES: Readonly<Record<EgressStatus, EgressState>> = {
  [EgressStatus.EGRESS_STARTING]: 'starting',
  [EgressStatus.EGRESS_ACTIVE]: 'active',
  [EgressStatus.EGRESS_ENDING]: 'ending',
  [EgressStatus.EGRESS_COMPLETE]: 'complete',
  [EgressStatus.EGRESS_FAILED]: 'failed',
  [EgressStatus.EGRESS_ABORTED]: 'aborted',
  [EgressStatus.EGRESS_LIMIT_REACHED]: 'limit_reached',
};

/** LiveKit's timestamps are unix nanoseconds; 0 means "not yet". */
function fromNanos(value: bigint): Date | undefined {
  return value > 0n ? new Date(Number(value / 1_000_000n)) : undefined;
}

/** The file path (or object key) the egress was asked to write, whatever the request kind. */
function requestedPath(info: EgressInfo): string | undefined {
  const request = info.request;
  switch (request.case) {
    case 'roomComposite':
    case 'trackComposite': {
      const value = request.value;
      const legacy = value.output.case === 'file' ? value.output.value.filepath : undefined;
      const legacySegments = value.output.case === 'segments' ? value.output.value.playlistName : undefined;
      return value.fileOutputs[0]?.filepath ?? legacy ?? value.segmentOutputs[0]?.playlistName ?? legacySegments;
    }
    case 'track':
      return request.value.output.case === 'file' ? request.value.output.value.filepath : undefined;
    default:
      return undefined;
  }
}

export function summarise(info: EgressInfo): EgressSummary {
  const file = info.fileResults[0];
  return {
    egressId: info.egressId,
    requestedPath: requestedPath(info),
    room: info.roomName,
    state: STATES[info.status],
    error: info.error || undefined,
    startedAt: fromNanos(info.startedAt),
    endedAt: fromNanos(info.endedAt),
    file: file
      ? {
          location: file.location || file.filename,
          durationS: Number(file.duration) / 1e9,
          sizeBytes: Number(file.size),
          mediaStartedAt: fromNanos(file.startedAt),
        }
      : undefined,
  };
}
