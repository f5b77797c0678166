import { Inject, Injectable } from '@nestjs/common';
import { Admitter, CapacityLedger } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { newId } from '@tally/contracts';
import type { Camera } from '@tally/db';
import { hashKey, sameSecret } from '../auth/key-hash.js';
import { refusalError } from '../capacity/refusal.js';
import { Clock } from '../common/clock.js';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { AppsRepository } from '../apps/apps.repository.js';
import { KeysRepository } from '../keys/keys.repository.js';
import { cameraUnitCost } from './camera-cost.js';
import { CameraViewerTokens } from './camera-viewer-tokens.js';
import { CamerasRepository } from './cameras.repository.js';

/** A viewer's place on the camera's node; give it back when the viewer leaves. */
export type ViewerLease = Readonly<{ release(): Promise<void> }>;

/** Admission is confirmed at once: the lease lives exactly as long as the viewer's connection. */
const VIEWER_LAPSE_MS = 60_000;

/**
 * Who may watch a camera (a viewer token for it, the app's key, the admin key, or anyone when the
 * app made its cameras public) and the admission of each live viewer (app.camera_viewers and the
 * camera's bitrate once more on its node's NIC).
 */
@Injectable()
export class CameraViewersService {
  constructor(
    private readonly cameras: CamerasRepository,
    private readonly apps: AppsRepository,
    private readonly keys: KeysRepository,
    private readonly tokens: CameraViewerTokens,
    private readonly admitter: Admitter,
    private readonly ledger: CapacityLedger,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /** The camera when `credential` may watch it; 404 for unknown ids (and other apps'), 401 otherwise. */
  async authorize(appId: string, cameraId: string, credential: string | undefined): Promise<Camera> {
    const camera = await this.cameras.find(appId, cameraId);
    if (!camera) throw new NotFoundError('camera');
    if (credential !== undefined && (await this.grants(credential, appId, cameraId))) return camera;
    if ((await this.apps.find(appId))?.publicCameras) return camera;
    throw new DomainError('unauthorized', credential === undefined ? 'a viewer token or key is required' : 'invalid viewer token or key');
  }

  async admit(camera: Camera): Promise<ViewerLease> {
    const id = newId('cvw');
    const unitCost = cameraUnitCost(this.admitter.model, 'camera.viewer', camera);
    const admitted = await this.admitter.admit(id, camera.appId, 'camera.viewer', 1, VIEWER_LAPSE_MS, { nodeId: camera.nodeId, unitCost });
    if (!admitted.ok) throw refusalError(admitted.refusal);
    await this.ledger.confirm(id);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        await this.ledger.release(id);
      },
    };
  }

  private async grants(credential: string, appId: string, cameraId: string): Promise<boolean> {
    if (this.tokens.allows(credential, appId, cameraId, this.clock.now())) return true;
    if (this.config.adminKey !== undefined && sameSecret(credential, this.config.adminKey)) return true;
    const key = await this.keys.findActiveByHash(hashKey(credential));
    return key?.appId === appId;
  }
}

/** `Authorization: Bearer x`, else `?token=x` / `?key=x` for clients that cannot set headers. */
export function presentedCredential(authorization: string | undefined, query: URLSearchParams, param: 'token' | 'key'): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  return bearer ?? query.get(param) ?? undefined;
}
