import { IngressClient, type IngressInfo, IngressInput } from 'livekit-server-sdk';
import type { IngressRequest, IngressState, IngressSummary, LivekitCredentials } from './livekit.types.js';

/** The adapter in front of LiveKit's Ingress service. */
export class LivekitIngressClient {
  private readonly client: IngressClient;

  constructor(credentials: LivekitCredentials) {
    this.client = new IngressClient(credentials.url, credentials.apiKey, credentials.apiSecret);
  }

  /** Creates the endpoint; LiveKit generates the stream key and returns it here only (and in its own lists). */
  async create(request: IngressRequest): Promise<IngressSummary & Readonly<{ streamKey: string }>> {
    const info = await this.client.createIngress(request.kind === 'rtmp' ? IngressInput.RTMP_INPUT : IngressInput.WHIP_INPUT, {
      name: request.name,
      roomName: request.room,
      participantIdentity: request.participantIdentity,
      participantName: request.participantName,
      // RTMP is always transcoded; WHIP forwards the publisher's tracks untouched unless asked to transcode.
      ...(request.kind === 'whip' ? { enableTranscoding: request.transcode } : {}),
    });
    return { ...summariseIngress(info), streamKey: info.streamKey };
  }

  async delete(ingressId: string): Promise<void> {
    await this.client.deleteIngress(ingressId);
  }

  /** Ingresses LiveKit knows about (all, one room's, or one by id). */
  async list(options: { room?: string; ingressId?: string } = {}): Promise<IngressSummary[]> {
    const infos = await this.client.listIngress({
      ...(options.room ? { roomName: options.room } : {}),
      ...(options.ingressId ? { ingressId: options.ingressId } : {}),
    });
    return infos.map(summariseIngress);
  }
}

/** IngressState.Status by number (the protocol enum is not re-exported by the SDK). */
const STATES: Readonly<Record<number, IngressState>> = {
  0: 'inactive',
  1: 'buffering',
  2: 'publishing',
  3: 'error',
  4: 'complete',
};

/** What Tally reads from LiveKit's IngressInfo; never the stream key. */
export function summariseIngress(info: IngressInfo): IngressSummary {
  const state = info.state;
  return {
    ingressId: info.ingressId,
    name: info.name,
    room: info.roomName,
    participantIdentity: info.participantIdentity,
    url: info.url,
    state: STATES[state?.status ?? 0] ?? 'inactive',
    error: state?.error || undefined,
    startedAt: state?.startedAt ? new Date(Number(state.startedAt / 1_000_000n)) : undefined,
    endedAt: state?.endedAt ? new Date(Number(state.endedAt / 1_000_000n)) : undefined,
  };
}
