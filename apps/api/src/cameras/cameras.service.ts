import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Admitter, CapacityLedger, cameraUnitCost } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { type CameraToken, type CameraView, type CreateCameraBody, type CreatedCamera, newId } from '@tally/contracts';
import type { Camera } from '@tally/db';
import { CameraLifecycle } from '@tally/streams';
import { AppsRepository } from '../tenancy/apps.repository.js';
import { hashKey } from '../tenancy/key-hash.js';
import { refusalError } from '../capacity/refusal.js';
import { Clock } from '../common/clock.js';
import { NotFoundError } from '../common/domain-error.js';
import { CameraFeedHub } from './camera-feed-hub.js';
import { CameraPresence } from './camera-presence.js';
import { CameraViewerPresence } from './camera-viewer-presence.js';
import { CameraViewerTokens } from './camera-viewer-tokens.js';
import { type CameraLive, cameraUrls, NOT_LIVE, toCameraView } from './camera.view.js';
import { CamerasRepository } from './cameras.repository.js';

/** Between admission and the row being written; the reservation is confirmed right after. */
const CREATE_LAPSE_MS = 60_000;

@Injectable()
export class CamerasService {
  constructor(
    private readonly cameras: CamerasRepository,
    private readonly lifecycle: CameraLifecycle,
    private readonly apps: AppsRepository,
    private readonly admitter: Admitter,
    private readonly ledger: CapacityLedger,
    private readonly hub: CameraFeedHub,
    private readonly presence: CameraPresence,
    private readonly viewerPresence: CameraViewerPresence,
    private readonly tokens: CameraViewerTokens,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Admits the camera (app.cameras, and its fps × frame size on a node's NIC) for as long as it
   * exists, whether or not it is connected. The camera id is the reservation id; the key is shown once.
   */
  async create(appId: string, body: CreateCameraBody): Promise<CreatedCamera> {
    if (!(await this.apps.find(appId))) throw new NotFoundError('app');
    const id = newId('cam');
    const unitCost = cameraUnitCost(this.admitter.model, 'camera.mjpeg', body);
    const admitted = await this.admitter.admit(id, appId, 'camera.mjpeg', 1, CREATE_LAPSE_MS, { unitCost });
    if (!admitted.ok) throw refusalError(admitted.refusal);
    const key = `ck_${randomBytes(24).toString('base64url')}`;
    let camera: Camera;
    try {
      camera = await this.cameras.create({
        id,
        appId,
        name: body.name,
        maxFps: body.maxFps,
        maxFrameKb: body.maxFrameKb,
        keyHash: hashKey(key),
        nodeId: admitted.nodeId,
      });
    } catch (error) {
      await this.ledger.release(id);
      throw error;
    }
    await this.ledger.confirm(id);
    return { ...toCameraView(camera, this.config.http.publicUrl, NOT_LIVE), key };
  }

  async list(appId: string): Promise<CameraView[]> {
    if (!(await this.apps.find(appId))) throw new NotFoundError('app');
    const cameras = await this.cameras.list(appId);
    const live = await this.live(cameras.map((c) => c.id));
    return cameras.map((c) => toCameraView(c, this.config.http.publicUrl, live(c.id)));
  }

  async get(appId: string, cameraId: string): Promise<CameraView> {
    const camera = await this.require(appId, cameraId);
    const live = await this.live([camera.id]);
    return toCameraView(camera, this.config.http.publicUrl, live(camera.id));
  }

  /** Gives the camera's capacity back and disconnects it and its viewers on this process. */
  async delete(appId: string, cameraId: string): Promise<void> {
    const camera = await this.require(appId, cameraId);
    if (!(await this.lifecycle.delete(camera.id, this.clock.now(), appId))) return;
    this.hub.remove(camera.id);
    await this.presence.gone(camera.id);
    await this.viewerPresence.forget(camera.id);
  }

  /** Every camera of a deleted app: disconnected here, its reservation given back. */
  async deleteAll(appId: string): Promise<void> {
    for (const camera of await this.cameras.list(appId)) await this.delete(appId, camera.id);
  }

  async token(appId: string, cameraId: string, ttlS: number): Promise<CameraToken> {
    const camera = await this.require(appId, cameraId);
    const expiresAt = new Date(this.clock.now().getTime() + ttlS * 1000);
    const urls = cameraUrls(this.config.http.publicUrl, appId, camera.id);
    return {
      token: this.tokens.mint(appId, camera.id, expiresAt),
      expiresAt: expiresAt.toISOString(),
      mjpegUrl: urls.mjpeg,
      frameUrl: urls.frame,
      websocketUrl: urls.websocket,
    };
  }

  /** Connection and viewers of each camera, as every API process reported them to Redis. */
  private async live(cameraIds: readonly string[]): Promise<(cameraId: string) => CameraLive> {
    const [seen, viewers] = await Promise.all([this.presence.lastFrames(cameraIds), this.viewerPresence.counts(cameraIds)]);
    return (id) => ({ lastFrameAt: seen.get(id), viewers: viewers.get(id) ?? 0 });
  }

  async require(appId: string, cameraId: string): Promise<Camera> {
    const camera = await this.cameras.find(appId, cameraId);
    if (!camera) throw new NotFoundError('camera');
    return camera;
  }
}
