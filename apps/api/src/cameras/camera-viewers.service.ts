import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Admitter, CapacityLedger, cameraUnitCost } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import { newId } from '@tally/contracts';
import type { Camera } from '@tally/db';
import { bearerToken } from '../tenancy/bearer.js';
import { hashKey, sameSecret } from '../tenancy/key-hash.js';
import { refusalError } from '../capacity/refusal.js';
import { Clock } from '../common/clock.js';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { AppsRepository } from '../tenancy/apps.repository.js';
import { KeysRepository } from '../tenancy/keys.repository.js';
import { AuthFailureLimiter } from '../rate-limit/auth-failures.js';
import { CameraViewerTokens } from './camera-viewer-tokens.js';
import { CamerasRepository } from './cameras.repository.js';
import { ViewerLeases } from './viewer-leases.js';

/**
 * A viewer's place on the camera's node; give it back when the viewer leaves. `onLost` runs (once,
 * at most) when the place lapsed and could not be taken again: end the viewer then.
 */
export type ViewerLease = Readonly<{ release(): Promise<void>; onLost(end: () => void): void }>;

/**
 * Who may watch a camera (a viewer token for it, the app's key, the admin key, or anyone when the
 * app made its cameras public) and the admission of each live viewer (app.camera_viewers and the
 * camera's bitrate once more on its node's NIC). A viewer's reservation is never confirmed: it is a
 * lease this process renews while the viewer is connected, so a process that dies frees its viewers'
 * places within one lease (TALLY_CAMERA_VIEWER_LEASE_S).
 */
@Injectable()
export class CameraViewersService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(CameraViewersService.name);
  private readonly leases: ViewerLeases;

  constructor(
    private readonly cameras: CamerasRepository,
    private readonly apps: AppsRepository,
    private readonly keys: KeysRepository,
    private readonly tokens: CameraViewerTokens,
    private readonly admitter: Admitter,
    private readonly ledger: CapacityLedger,
    private readonly clock: Clock,
    private readonly authFailures: AuthFailureLimiter,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.leases = new ViewerLeases(ledger, config.cameras.viewerLeaseS * 1000, (error) =>
      this.logger.warn(`camera viewer lease renewal failed: ${String(error)}`),
    );
  }

  onModuleInit(): void {
    this.leases.start();
  }

  onModuleDestroy(): void {
    this.leases.stop();
  }

  /**
   * The camera when `credential` may watch it; 404 for unknown ids (and other apps'), 401 otherwise.
   * A credential that grants nothing counts as a failed authentication of `clientIp` (429 past the
   * budget; then nothing is looked up for that client until its window ends).
   */
  async authorize(appId: string, cameraId: string, credential: string | undefined, clientIp: string): Promise<Camera> {
    const throttled = this.authFailures.refusedBeforeLookup(clientIp);
    if (throttled) throw throttled;
    const camera = await this.cameras.find(appId, cameraId);
    if (!camera) throw new NotFoundError('camera');
    if (credential !== undefined && (await this.grants(credential, appId, cameraId))) return camera;
    if ((await this.apps.find(appId))?.publicCameras) return camera;
    const refusal = await this.authFailures.refusal(clientIp);
    if (refusal) throw refusal;
    throw new DomainError('unauthorized', credential === undefined ? 'a viewer token or key is required' : 'invalid viewer token or key');
  }

  async admit(camera: Camera): Promise<ViewerLease> {
    const id = newId('cvw');
    const admitted = await this.take(id, camera);
    if (!admitted.ok) throw refusalError(admitted.refusal);
    let end: (() => void) | undefined;
    let lost = false;
    this.leases.hold(id, {
      readmit: async () => {
        const again = await this.take(id, camera);
        // The viewer may have left while its place was being taken again.
        if (again.ok && !this.leases.holds(id)) await this.ledger.release(id);
        return again.ok;
      },
      end: () => {
        lost = true;
        end?.();
      },
    });
    return {
      release: async () => {
        if (this.leases.drop(id)) await this.ledger.release(id);
      },
      onLost: (callback) => {
        end = callback;
        if (lost) callback();
      },
    };
  }

  private take(id: string, camera: Camera): ReturnType<Admitter['admit']> {
    const unitCost = cameraUnitCost(this.admitter.model, 'camera.viewer', camera);
    return this.admitter.admit(id, camera.appId, 'camera.viewer', 1, this.leases.leaseMs, { nodeId: camera.nodeId, unitCost });
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
  const bearer = bearerToken(authorization);
  return bearer ?? query.get(param) ?? undefined;
}
