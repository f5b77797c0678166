import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import {
  type CreatedIngress,
  type CreateIngressBody,
  defaultTranscode,
  type IngressListQuery,
  type IngressView,
  newId,
} from '@tally/contracts';
import type { Ingress } from '@tally/db';
import { LivekitIngressClient } from '@tally/livekit';
import { NodeRegistry, NodeWorkers, WorkerNotReadyError } from '@tally/nodes';
import { INGRESS_START_LAPSE_MS, IngressLifecycle, ingressIdentity, ingressWorkload, toIngressView } from '@tally/streams';
import { AppsRepository } from '../tenancy/apps.repository.js';
import { refusalError } from '../capacity/refusal.js';
import { Clock } from '../common/clock.js';
import { DomainError, NotFoundError, UpstreamUnavailableError } from '../common/domain-error.js';
import { StreamsService } from '../streams/streams.service.js';
import { IngressesRepository } from './ingresses.repository.js';

/** How long creating an ingress waits for the node's ingress worker when it is not running yet. */
const WORKER_READY_TIMEOUT_MS = 60_000;

@Injectable()
export class IngressesService {
  private readonly logger = new Logger(IngressesService.name);

  constructor(
    private readonly ingresses: IngressesRepository,
    private readonly lifecycle: IngressLifecycle,
    private readonly apps: AppsRepository,
    private readonly streams: StreamsService,
    private readonly admitter: Admitter,
    private readonly ledger: CapacityLedger,
    private readonly livekit: LivekitIngressClient,
    private readonly workers: NodeWorkers,
    private readonly nodes: NodeRegistry,
    private readonly clock: Clock,
  ) {}

  /**
   * Admits the ingress against the app's quota and a node's budget, and only then asks LiveKit for
   * the endpoint. The ingress id is the reservation id. The stream key is returned here and only here.
   */
  async create(appId: string, body: CreateIngressBody): Promise<CreatedIngress> {
    if (!(await this.apps.find(appId))) throw new NotFoundError('app');
    const stream = await this.streams.require(appId, body.streamId);
    if (stream.status === 'ended') throw new DomainError('conflict', 'the stream has ended', { streamStatus: stream.status });
    await this.streams.roomReady(stream.room);
    const transcode = body.transcode ?? defaultTranscode(body.kind);
    if (body.kind === 'rtmp' && !transcode) {
      throw new DomainError('validation_failed', 'RTMP ingress always transcodes', { field: 'transcode' });
    }

    const id = newId('ing');
    const admitted = await this.admitter.admit(id, appId, ingressWorkload(body.kind), 1, INGRESS_START_LAPSE_MS);
    if (!admitted.ok) throw refusalError(admitted.refusal);

    let created;
    try {
      // The node's agent starts its ingress worker for the first ingress and keeps it while any remains.
      await this.workers.retain(admitted.nodeId, 'ingress', id);
      await this.workers.ensureReady(admitted.nodeId, 'ingress', { timeoutMs: WORKER_READY_TIMEOUT_MS });
      created = await this.livekit.create({
        kind: body.kind,
        name: id,
        room: stream.room,
        participantIdentity: ingressIdentity(id),
        participantName: `${body.kind.toUpperCase()} ingress`,
        transcode,
      });
    } catch (error) {
      await this.workers.dropWork(admitted.nodeId, 'ingress', id);
      await this.ledger.release(id);
      throw new UpstreamUnavailableError(error instanceof WorkerNotReadyError ? 'ingress worker' : 'livekit ingress', error);
    }
    const ingress = await this.ingresses.create({
      id,
      appId,
      streamId: stream.id,
      kind: body.kind,
      transcode,
      livekitIngressId: created.ingressId,
      url: await this.pushUrl(admitted.nodeId, body.kind, created.url),
      streamKeyHash: createHash('sha256').update(created.streamKey).digest('hex'),
      nodeId: admitted.nodeId,
    });
    return { ...toIngressView(ingress), streamKey: created.streamKey };
  }

  /**
   * The URL an encoder pushes to: the admitted node's ingress, as its agent reports it, so the
   * session runs where its capacity was reserved. LiveKit's own (the origin's) when the node reports none.
   */
  private async pushUrl(nodeId: string, kind: CreateIngressBody['kind'], livekitUrl: string): Promise<string> {
    const node = await this.nodes.get(nodeId).catch((error: unknown) => {
      this.logger.warn(`ingress URL of node ${nodeId} unknown (LiveKit's is handed out): ${String(error)}`);
      return undefined;
    });
    if (!node?.ingress) return livekitUrl;
    return kind === 'rtmp' ? node.ingress.rtmpUrl : node.ingress.whipUrl;
  }

  async list(appId: string, query: IngressListQuery): Promise<IngressView[]> {
    if (!(await this.apps.find(appId))) throw new NotFoundError('app');
    return (await this.ingresses.list(appId, query)).map(toIngressView);
  }

  async get(appId: string, ingressId: string): Promise<IngressView> {
    return toIngressView(await this.require(appId, ingressId));
  }

  /** Removes the endpoint from LiveKit (a publisher still pushing is cut off), then gives its capacity back. */
  async delete(appId: string, ingressId: string): Promise<void> {
    const ingress = await this.require(appId, ingressId);
    if (ingress.deletedAt) return;
    try {
      await this.livekit.delete(ingress.livekitIngressId);
    } catch (error) {
      // Already gone from LiveKit is what was asked for; anything else must not leave a live endpoint behind.
      if (await this.stillInLivekit(ingress)) throw new UpstreamUnavailableError('livekit ingress', error);
      this.logger.warn(`delete ${ingress.id}: LiveKit no longer knew ${ingress.livekitIngressId}`);
    }
    await this.lifecycle.deleted(ingress, this.clock.now());
  }

  private async require(appId: string, ingressId: string): Promise<Ingress> {
    const ingress = await this.ingresses.find(appId, ingressId);
    if (!ingress) throw new NotFoundError('ingress');
    return ingress;
  }

  private async stillInLivekit(ingress: Ingress): Promise<boolean> {
    try {
      return (await this.livekit.list({ ingressId: ingress.livekitIngressId })).length > 0;
    } catch {
      return true;
    }
  }
}
