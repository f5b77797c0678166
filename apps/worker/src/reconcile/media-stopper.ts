import { Injectable, Logger } from '@nestjs/common';
import type { Ingress } from '@tally/db';
import { LivekitEgressClient, LivekitIngressClient, LivekitRoomClient } from '@tally/livekit';

/**
 * Stops LiveKit work on behalf of a deleted app. Each call is best effort: what LiveKit no longer
 * knows is already stopped, and anything left running is found again by the next sweep.
 */
@Injectable()
export class MediaStopper {
  private readonly logger = new Logger(MediaStopper.name);

  constructor(
    private readonly rooms: LivekitRoomClient,
    private readonly egress: LivekitEgressClient,
    private readonly ingresses: LivekitIngressClient,
  ) {}

  /** Removing the room disconnects every participant (ingress publishers included). */
  async deleteRoom(room: string): Promise<void> {
    await this.rooms.deleteRoom(room).catch((error: unknown) => this.logger.log(`room ${room} already gone (${String(error)})`));
  }

  /** The adapter notes the stop, so the egress reconciler leaves the egress to finish rather than stopping it again as a ghost. */
  async stopEgress(egressId: string | null): Promise<void> {
    if (!egressId) return;
    await this.egress.stop(egressId).catch((error: unknown) => this.logger.log(`egress ${egressId} already ended (${String(error)})`));
  }

  /** Deletes the endpoint (an encoder still pushing is cut off); IngressLifecycle.deleted then gives its node's hold back. */
  async deleteIngress(ingress: Ingress): Promise<void> {
    await this.ingresses
      .delete(ingress.livekitIngressId)
      .catch((error: unknown) => this.logger.log(`ingress ${ingress.livekitIngressId} already gone (${String(error)})`));
  }
}
