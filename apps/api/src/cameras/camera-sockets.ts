import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import { CAMERA_CLOSE_CODES, CameraParams } from '@tally/contracts';
import type { Camera } from '@tally/db';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { z } from 'zod';
import { hashKey } from '../tenancy/key-hash.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { limitIncomingMessages } from '../common/message-limit.js';
import { sendError } from '../common/http-error.filter.js';
import { CameraFrameMetrics } from './camera-frames.metrics.js';
import { AuthFailureLimiter } from '../rate-limit/auth-failures.js';
import { CameraFeedHub } from './camera-feed-hub.js';
import { CameraPresence } from './camera-presence.js';
import { CameraViewersService, presentedCredential, type ViewerLease } from './camera-viewers.service.js';
import { CamerasRepository } from './cameras.repository.js';
import { FrameRateLimiter, isJpeg } from './jpeg-frame.js';
import { LatestFrameSink } from './latest-frame-sink.js';

const CAMERA_PATH = '/v1/apps/:appId/cameras/:cameraId';
/** Viewers only receive: anything larger than this from one closes it (1009). */
const VIEWER_MAX_MESSAGE_BYTES = 1024;
/** A camera sending more than this many times its maxFps (over any second) is closed, not only throttled. */
const ABUSE_FPS_FACTOR = 2;

/**
 * The WebSocket side of cameras, as @fastify/websocket routes on the API's own server: `…/ingest`
 * takes one JPEG per binary message from the camera, `…/ws` sends each new frame to a viewer as one
 * binary message. Each upgrade is an ordinary Fastify request first: its credential is checked (and
 * a viewer admitted) before the upgrade, and a refusal is an HTTP answer in the API's error shape
 * (401, 404, 429) from the same error renderer as every other route.
 */
@Injectable()
export class CameraSockets implements OnModuleDestroy {
  private readonly logger = new Logger(CameraSockets.name);
  private readonly idleMs: number;
  private readonly admitted = new WeakMap<FastifyRequest, Camera | ViewerLease>();
  private sockets: Set<WebSocket> | undefined;

  constructor(
    private readonly cameras: CamerasRepository,
    private readonly viewers: CameraViewersService,
    private readonly hub: CameraFeedHub,
    private readonly presence: CameraPresence,
    private readonly clock: Clock,
    private readonly frames: CameraFrameMetrics,
    private readonly authFailures: AuthFailureLimiter,
    @Inject(CONFIG) config: Config,
  ) {
    this.idleMs = config.cameras.idleTimeoutS * 1000;
  }

  /** Adds the two routes; `fastify` has @fastify/websocket registered (see common/web-sockets.ts). */
  register(fastify: FastifyInstance): void {
    this.sockets = fastify.websocketServer.clients;
    const errorHandler = (error: unknown, request: FastifyRequest, reply: Parameters<typeof sendError>[1]) =>
      sendError(request, reply, error);
    fastify.get(
      `${CAMERA_PATH}/ingest`,
      { websocket: true, errorHandler, preValidation: async (request) => this.admitted.set(request, await this.authorizeCamera(request)) },
      (ws, request) => this.ingest(ws, this.admitted.get(request) as Camera),
    );
    fastify.get(
      `${CAMERA_PATH}/ws`,
      { websocket: true, errorHandler, preValidation: async (request) => this.admitted.set(request, await this.admitViewer(request)) },
      (ws, request) => this.view(ws, scope(request), this.admitted.get(request) as ViewerLease),
    );
  }

  onModuleDestroy(): void {
    for (const client of this.sockets ?? []) client.terminate();
  }

  /** The camera whose own key is presented (header or `?key=`); any other key is 401. */
  private async authorizeCamera(request: FastifyRequest): Promise<Camera> {
    const { appId, cameraId } = scope(request);
    const throttled = this.authFailures.refusedBeforeLookup(request.ip);
    if (throttled) throw throttled;
    const key = presentedCredential(request.headers.authorization, searchParams(request), 'key');
    const camera = key === undefined ? null : await this.cameras.findByKeyHash(hashKey(key));
    if (camera && camera.id === cameraId && camera.appId === appId) return camera;
    throw (await this.authFailures.refusal(request.ip)) ?? new DomainError('unauthorized', 'unknown camera key');
  }

  /** The same check as the MJPEG and still routes, then the viewer's admission (429 when it does not fit). */
  private async admitViewer(request: FastifyRequest): Promise<ViewerLease> {
    const { appId, cameraId } = scope(request);
    const camera = await this.viewers.authorize(
      appId,
      cameraId,
      presentedCredential(request.headers.authorization, searchParams(request), 'token'),
      request.ip,
    );
    const lease = await this.viewers.admit(camera);
    // Also when the client leaves before the upgrade completes (ws then never hands over a socket).
    request.raw.socket.once('close', () => void lease.release().catch(() => {}));
    return lease;
  }

  private ingest(ws: WebSocket, camera: Camera): void {
    limitIncomingMessages(ws, camera.maxFrameKb * 1024);
    const limiter = new FrameRateLimiter(camera.maxFps, Date.now());
    const abuse = new FrameRateLimiter(camera.maxFps * ABUSE_FPS_FACTOR, Date.now());
    let idle: NodeJS.Timeout | undefined;
    const close = (reason: keyof typeof CAMERA_CLOSE_CODES, message: string) => {
      clearTimeout(idle);
      ws.close(CAMERA_CLOSE_CODES[reason], message);
    };
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => close('idle', `no frame for ${this.idleMs / 1000} s`), this.idleMs);
    };
    const detach = this.hub.attachIngest(camera, { close });
    armIdle();
    void this.presence.seen(camera.id, this.clock.now()).catch(() => {});

    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!abuse.take(Date.now())) {
        this.frames.dropped(camera.appId);
        return close('tooFast', `more than ${ABUSE_FPS_FACTOR} × maxFps (${camera.maxFps}) frames in a second`);
      }
      if (!isBinary) return close('badFrame', 'frames are binary JPEG messages');
      if (!isJpeg(data)) return close('badFrame', 'not a JPEG (expected FF D8 … FF D9)');
      armIdle();
      if (!limiter.take(Date.now())) return this.frames.dropped(camera.appId);
      const now = this.clock.now();
      this.hub.publish(camera.id, data, now);
      this.frames.published(camera.appId);
      void this.presence.seen(camera.id, now).catch(() => {});
    });
    ws.on('close', () => {
      clearTimeout(idle);
      if (detach()) void this.presence.gone(camera.id).catch(() => {});
    });
    // After an oversize message ws has already sent its 1009 close: let that reach the peer.
    ws.on('error', () => ws.readyState !== ws.CLOSING && ws.terminate());
  }

  private view(ws: WebSocket, { appId, cameraId }: z.infer<typeof CameraParams>, lease: ViewerLease): void {
    limitIncomingMessages(ws, VIEWER_MAX_MESSAGE_BYTES);
    const sink = new LatestFrameSink(
      (frame, done) => ws.send(frame, { binary: true }, done),
      () => ws.terminate(),
    );
    const unsubscribe = this.hub.subscribe(
      { id: cameraId, appId },
      {
        offer: (frame) => sink.offer(frame),
        end: () => ws.close(CAMERA_CLOSE_CODES.deleted, 'the camera was deleted'),
      },
    );
    lease.onLost(() => ws.close(CAMERA_CLOSE_CODES.viewerRefused, 'the viewer no longer fits app.camera_viewers or the node'));
    ws.on('message', () => {
      // Viewers only receive; anything they send is ignored.
    });
    ws.on('close', () => {
      sink.close();
      unsubscribe();
      void lease.release().catch((error: unknown) => this.logger.warn(`camera viewer release failed: ${String(error)}`));
    });
    // After an oversize message ws has already sent its 1009 close: let that reach the peer.
    ws.on('error', () => ws.readyState !== ws.CLOSING && ws.terminate());
  }
}

/** Malformed ids have no WebSocket, as before any lookup. */
function scope(request: FastifyRequest): z.infer<typeof CameraParams> {
  const parsed = CameraParams.safeParse(request.params);
  if (!parsed.success) throw new DomainError('not_found', 'no WebSocket here');
  return parsed.data;
}

function searchParams(request: FastifyRequest): URLSearchParams {
  return new URL(request.url, 'http://upgrade').searchParams;
}
