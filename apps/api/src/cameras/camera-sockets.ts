import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CONFIG, type Config } from '@tally/config';
import { CAMERA_CLOSE_CODES, type ErrorCode } from '@tally/contracts';
import type { Camera } from '@tally/db';
import { type WebSocket, WebSocketServer } from 'ws';
import { hashKey } from '../auth/key-hash.js';
import { Clock } from '../common/clock.js';
import { DomainError, LimitRefusedError } from '../common/domain-error.js';
import { ERROR_STATUS } from '../common/http-error.filter.js';
import { CameraFrameMetrics } from '../metrics/camera-frames.metrics.js';
import { CameraFeedHub } from './camera-feed-hub.js';
import { CameraPresence } from './camera-presence.js';
import { CameraViewersService, presentedCredential, type ViewerLease } from './camera-viewers.service.js';
import { CamerasRepository } from './cameras.repository.js';
import { FrameRateLimiter, isJpeg } from './jpeg-frame.js';
import { LatestFrameSink } from './latest-frame-sink.js';

const SOCKET_PATH = /^\/v1\/apps\/(app_[a-z0-9]{16})\/cameras\/(cam_[a-z0-9]{16})\/(ingest|ws)$/;
/** Above the largest maxFrameKb a camera may have, so an oversize frame gets Tally's close code, not ws's 1009. */
const MAX_PAYLOAD = 4 * 1024 * 1024;

/**
 * The WebSocket side of cameras on the API's own HTTP server: `…/ingest` takes one JPEG per binary
 * message from the camera, `…/ws` sends each new frame to a viewer as one binary message.
 */
@Injectable()
export class CameraSockets implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(CameraSockets.name);
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD, perMessageDeflate: false });
  private readonly idleMs: number;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly cameras: CamerasRepository,
    private readonly viewers: CameraViewersService,
    private readonly hub: CameraFeedHub,
    private readonly presence: CameraPresence,
    private readonly clock: Clock,
    private readonly frames: CameraFrameMetrics,
    @Inject(CONFIG) config: Config,
  ) {
    this.idleMs = config.cameras.idleTimeoutS * 1000;
  }

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.route(request, socket, head).catch((error: unknown) => {
        this.logger.error(`camera socket upgrade failed: ${String(error)}`);
        reject(socket, 500, 'internal', 'internal error');
      });
    });
  }

  onModuleDestroy(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private async route(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://upgrade');
    const match = SOCKET_PATH.exec(url.pathname);
    if (!match) return reject(socket, 404, 'not_found', 'no WebSocket here');
    const [, appId = '', cameraId = '', kind] = match;
    const authorization = request.headers.authorization;
    if (kind === 'ingest') {
      const key = presentedCredential(authorization, url.searchParams, 'key');
      const camera = key === undefined ? null : await this.cameras.findByKeyHash(hashKey(key));
      if (!camera || camera.id !== cameraId || camera.appId !== appId) return reject(socket, 401, 'unauthorized', 'unknown camera key');
      this.wss.handleUpgrade(request, socket, head, (ws) => this.ingest(ws, camera));
      return;
    }
    let lease: ViewerLease;
    try {
      const camera = await this.viewers.authorize(appId, cameraId, presentedCredential(authorization, url.searchParams, 'token'));
      lease = await this.viewers.admit(camera);
    } catch (error) {
      if (error instanceof LimitRefusedError) return reject(socket, 429, error.code, error.message, error.limit);
      if (error instanceof DomainError) return reject(socket, ERROR_STATUS[error.code], error.code, error.message);
      throw error;
    }
    // Also when the client leaves before the upgrade completes (ws then never hands over a socket).
    socket.once('close', () => void lease.release().catch(() => {}));
    this.wss.handleUpgrade(request, socket, head, (ws) => this.view(ws, cameraId, lease));
  }

  private ingest(ws: WebSocket, camera: Camera): void {
    const maxBytes = camera.maxFrameKb * 1024;
    const limiter = new FrameRateLimiter(camera.maxFps, Date.now());
    let idle: NodeJS.Timeout | undefined;
    const close = (reason: keyof typeof CAMERA_CLOSE_CODES, message: string) => {
      clearTimeout(idle);
      ws.close(CAMERA_CLOSE_CODES[reason], message);
    };
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => close('idle', `no frame for ${this.idleMs / 1000} s`), this.idleMs);
    };
    const detach = this.hub.attachIngest(camera.id, { close });
    armIdle();
    void this.presence.seen(camera.id, this.clock.now()).catch(() => {});

    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) return close('badFrame', 'frames are binary JPEG messages');
      if (data.length > maxBytes)
        return close('frameTooLarge', `frame of ${data.length} bytes is over maxFrameKb (${camera.maxFrameKb} KiB)`);
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
    ws.on('error', () => ws.terminate());
  }

  private view(ws: WebSocket, cameraId: string, lease: ViewerLease): void {
    const sink = new LatestFrameSink(
      (frame, done) => ws.send(frame, { binary: true }, done),
      () => ws.terminate(),
    );
    const unsubscribe = this.hub.subscribe(cameraId, {
      offer: (frame) => sink.offer(frame),
      end: () => ws.close(CAMERA_CLOSE_CODES.deleted, 'the camera was deleted'),
    });
    lease.onLost(() => ws.close(CAMERA_CLOSE_CODES.viewerRefused, 'the viewer no longer fits app.camera_viewers or the node'));
    ws.on('message', () => {
      // Viewers only receive; anything they send is ignored.
    });
    ws.on('close', () => {
      sink.close();
      unsubscribe();
      void lease.release().catch((error: unknown) => this.logger.warn(`camera viewer release failed: ${String(error)}`));
    });
    ws.on('error', () => ws.terminate());
  }
}

/** Answers the upgrade request with a plain HTTP error in the API's error shape, then drops the socket. */
function reject(socket: Duplex, status: number, code: ErrorCode, message: string, limit?: object): void {
  const body = JSON.stringify({ error: { code, message, ...limit } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
