import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import type { CreateTokenBody, StreamToken } from '@tally/contracts';
import { JoinTokenSigner } from '@tally/livekit';
import { Clock } from '../common/clock.js';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { StreamCache } from './stream-cache.js';
import { StreamsService } from './streams.service.js';

@Injectable()
export class TokensService {
  private readonly signer: JoinTokenSigner;

  constructor(
    private readonly streams: StreamCache,
    private readonly rooms: StreamsService,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.signer = new JoinTokenSigner(config.livekit);
  }

  /** A join token for this stream's room only; viewers may subscribe but never publish. */
  async mint(appId: string, streamId: string, body: CreateTokenBody): Promise<StreamToken> {
    // The usual case, a stream and room this process has seen, takes no promise.
    const stream = this.streams.cached(appId, streamId) ?? (await this.streams.findOpen(appId, streamId));
    if (!stream) throw new NotFoundError('stream');
    if (stream === 'ended') throw new DomainError('conflict', 'the stream has ended');
    // The room may still be being created (StreamRooms): nobody can join a room that does not exist yet.
    if (!this.rooms.isRoomReady(stream.room)) await this.rooms.roomReady(stream.room);
    const now = this.clock.now().getTime();
    const token = this.signer.sign(
      { room: stream.room, identity: body.identity, name: body.name, canPublish: body.role === 'publisher', ttlSeconds: body.ttlSeconds },
      now,
    );
    const expiresAt = new Date(now + body.ttlSeconds * 1000);
    return { token, url: this.config.livekit.publicUrl, identity: body.identity, role: body.role, expiresAt: expiresAt.toISOString() };
  }
}
