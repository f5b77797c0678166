import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EgressStopNotes } from '@tally/livekit';
import type { Redis } from 'ioredis';
import { Clock } from './clock.js';
import { RedisConnection } from './redis-connection.js';

/**
 * How long a stop Tally asked of LiveKit is given to take effect. LiveKit keeps listing an egress
 * STARTING or ACTIVE until egress itself reports the stop (a stop whose egress does not answer
 * times out after 10 s and changes nothing), so a sweep within this time would only ask again.
 */
export const STOP_PATIENCE_S = 600;

const key = (egressId: string) => `tally:egress:stop-asked:${egressId}`;

/**
 * The egresses Tally has asked LiveKit to stop lately, whichever process asked (the API's recording
 * and HLS stops, the worker's teardowns and sweeps): the egress adapter notes each stop here, and the
 * worker's egress reconciler reads them. Kept in Redis so every process (and a restarted one) sees them.
 */
@Injectable()
export class EgressStopRequests implements EgressStopNotes {
  private readonly logger = new Logger(EgressStopRequests.name);

  constructor(
    @Inject(RedisConnection) private readonly redis: Pick<Redis, 'set' | 'mget'>,
    private readonly clock: Clock,
  ) {}

  /** Called before the stop is asked; never rejects. A Redis failure costs a repeated stop later, never the stop. */
  async asked(egressId: string): Promise<void> {
    await this.redis.set(key(egressId), String(this.clock.now().getTime()), 'EX', STOP_PATIENCE_S).catch((error: unknown) => {
      this.logger.warn(`could not note the stop of egress ${egressId}: ${String(error)}`);
    });
  }

  /** Which of these egresses Tally asked to stop within STOP_PATIENCE_S. When Redis cannot say: none. */
  async pending(egressIds: readonly string[]): Promise<ReadonlySet<string>> {
    if (egressIds.length === 0) return new Set();
    try {
      const asked = await this.redis.mget(egressIds.map(key));
      return new Set(egressIds.filter((_, i) => asked[i] !== null && asked[i] !== undefined));
    } catch (error) {
      this.logger.warn(`could not read egress stop requests: ${String(error)}`);
      return new Set();
    }
  }
}
