import { Injectable, Logger } from '@nestjs/common';
import type { Camera } from '@tally/db';
import type { FastifyReply } from 'fastify';
import { NotFoundError } from '../common/domain-error.js';
import { CameraFeedHub } from './camera-feed-hub.js';
import { CameraViewersService } from './camera-viewers.service.js';
import { LatestFrameSink } from './latest-frame-sink.js';

const BOUNDARY = 'tallyframe';

/** The HTTP ways to watch a camera: a never-ending multipart/x-mixed-replace stream, or its latest frame. */
@Injectable()
export class CameraMjpegService {
  private readonly logger = new Logger(CameraMjpegService.name);

  constructor(
    private readonly viewers: CameraViewersService,
    private readonly hub: CameraFeedHub,
  ) {}

  /** Each new frame as one part; a viewer whose connection is still busy skips to the newest frame. */
  async stream(camera: Camera, reply: FastifyReply): Promise<void> {
    const lease = await this.viewers.admit(camera);
    void reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': `multipart/x-mixed-replace; boundary=${BOUNDARY}`,
      'cache-control': 'no-store',
      'x-request-id': String(reply.request.id),
    });
    // A player should see the stream open even while the camera is not sending yet.
    res.flushHeaders();
    const sink = new LatestFrameSink(
      (frame, done) => {
        res.write(`--${BOUNDARY}\r\ncontent-type: image/jpeg\r\ncontent-length: ${frame.length}\r\n\r\n`);
        res.write(frame);
        res.write('\r\n', (error) => done(error ?? undefined));
      },
      () => res.destroy(),
    );
    const unsubscribe = this.hub.subscribe(camera, { offer: (frame) => sink.offer(frame), end: () => res.end() });
    lease.onLost(() => res.end());
    const left = () => {
      sink.close();
      unsubscribe();
      void lease.release().catch((error: unknown) => this.logger.warn(`camera viewer release failed: ${String(error)}`));
    };
    res.once('close', left);
    // The player may have gone while it was being admitted.
    if (res.closed) left();
  }

  /** The latest frame this API process holds; 404 until the camera has sent one. */
  async frame(camera: Camera, reply: FastifyReply): Promise<void> {
    const latest = this.hub.latest(camera.id);
    if (!latest) throw new NotFoundError('frame');
    await reply
      .header('content-type', 'image/jpeg')
      .header('cache-control', 'no-store')
      .header('last-modified', latest.at.toUTCString())
      .send(latest.frame);
  }
}
