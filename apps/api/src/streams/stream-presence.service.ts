import { Injectable, Logger } from '@nestjs/common';
import { CapacityLedger } from '@tally/admission';
import { LivekitRoomClient } from '@tally/livekit';
import { StreamLifecycle } from '@tally/streams';
import { Clock } from '../common/clock.js';
import { StreamsRepository } from './streams.repository.js';
import { StreamsService } from './streams.service.js';

/**
 * Applies LiveKit's room events to streams. Counts are read back from LiveKit
 * rather than added up from events, because webhooks can arrive late, twice or never.
 */
@Injectable()
export class StreamPresenceService {
  private readonly logger = new Logger(StreamPresenceService.name);

  constructor(
    private readonly streams: StreamsRepository,
    private readonly service: StreamsService,
    private readonly lifecycle: StreamLifecycle,
    private readonly ledger: CapacityLedger,
    private readonly livekit: LivekitRoomClient,
    private readonly clock: Clock,
  ) {}

  /**
   * After a join, leave or track change: refresh counts; the first participant makes the stream live.
   * LiveKit may still list a participant that just left: `departed` is left out of the counts, by its
   * session id when both are known, since a participant that rejoined (after a Redis failover, say)
   * has a new session under the same identity, and the old session's leave may arrive after the join.
   */
  async refresh(room: string, departed?: Readonly<{ identity: string | undefined; sid: string | undefined }>): Promise<void> {
    const stream = await this.streams.findByRoom(room);
    if (!stream || stream.status === 'ended') return;
    const isDeparted = (p: Readonly<{ identity: string; sid?: string | undefined }>) =>
      departed !== undefined &&
      (departed.sid !== undefined && p.sid !== undefined ? p.sid === departed.sid : p.identity === departed.identity);
    const present = (await this.livekit.listParticipants(room)).filter((p) => !isDeparted(p));
    const counts = { participants: present.length, publishers: present.filter((p) => p.publishedTracks > 0).length };
    if (counts.participants > 0) {
      // The counts go in with the status change, so stream.live reports who was there.
      await this.lifecycle.markLive(stream.id, this.clock.now(), counts);
      await this.ledger.confirm(stream.id);
    }
    await this.lifecycle.setPresence(stream.id, counts);
  }

  /**
   * Ends the stream, unless LiveKit still lists someone in its room: then what finished was a copy of
   * the room on another node (one LiveKit took for gone and placed the room anew meanwhile), emptied
   * as its participants rejoined the other copy, and the stream goes on there. Unreachable, LiveKit is
   * taken at its word.
   */
  async roomFinished(room: string): Promise<void> {
    const stream = await this.streams.findByRoom(room);
    // A room the API removed on DELETE belongs to a stream already ended: finish leaves it as it is.
    if (!stream || stream.status === 'ended') return;
    const present = await this.livekit.listParticipants(room).catch(() => []);
    if (present.length > 0) {
      this.logger.warn(
        `room_finished for ${room}, which LiveKit still lists with ${present.length} participant(s): stream ${stream.id} goes on`,
      );
      return;
    }
    await this.service.finish(stream, 'room_finished');
  }
}
