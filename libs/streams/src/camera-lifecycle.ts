import { type Admitter, type CapacityLedger, cameraUnitCost } from '@tally/admission';
import type { Camera, PrismaClient } from '@tally/db';

/**
 * The ws-mjpeg camera's lifecycle as the API (create, DELETE) and the worker (reconciliation, app
 * teardown) share it. A camera's reservation (the camera id, at its own fps × frame-size cost)
 * lives as long as its row: taken before the row is written, given back after it is marked deleted.
 */
export class CameraLifecycle {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly ledger: CapacityLedger,
    private readonly admitter: Admitter,
  ) {}

  /** Marks the camera deleted, then gives its capacity back; false when it was already deleted (another writer won). */
  async delete(cameraId: string, at: Date, appId?: string): Promise<boolean> {
    const { count } = await this.prisma.camera.updateMany({
      where: { id: cameraId, deletedAt: null, ...(appId === undefined ? {} : { appId }) },
      data: { deletedAt: at },
    });
    if (count === 1) await this.ledger.release(cameraId);
    return count === 1;
  }

  /** A camera without a reservation gets it back on its node, at its own cost. True when restored. */
  restore(camera: Camera): Promise<boolean> {
    const unitCost = cameraUnitCost(this.admitter.model, 'camera.mjpeg', camera);
    return this.admitter.restore(camera.id, camera.appId, 'camera.mjpeg', 1, { nodeId: camera.nodeId, unitCost });
  }
}
