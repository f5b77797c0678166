import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { NotFoundError } from '../common/domain-error.js';
import { HlsRepository } from './hls.repository.js';

/**
 * Serves a stream's playlists and segments for players and CDN pull zones. A playlist changes with
 * every segment, so caches keep it about one segment at most; a segment never changes once its
 * name is in a playlist, so it is immutable.
 */
@Injectable()
export class HlsFilesService {
  constructor(private readonly sessions: HlsRepository) {}

  async serve(appId: string, streamId: string, file: string, reply: FastifyReply): Promise<void> {
    const session = await this.sessions.latest(appId, streamId);
    if (!session) throw new NotFoundError('HLS playlist');
    const path = join(session.dir, file);
    const size = await stat(path).then(
      (s) => (s.isFile() ? s.size : undefined),
      () => undefined,
    );
    if (size === undefined) throw new NotFoundError(file.endsWith('.m3u8') ? 'HLS playlist' : 'HLS segment');
    const playlist = file.endsWith('.m3u8');
    const maxAge = session.status === 'stopped' ? session.segmentS : Math.max(1, Math.floor(session.segmentS / 2));
    await reply
      .header('content-type', playlist ? 'application/vnd.apple.mpegurl' : file.endsWith('.ts') ? 'video/mp2t' : 'video/mp4')
      .header('content-length', String(size))
      .header('cache-control', playlist ? `public, max-age=${maxAge}` : 'public, max-age=31536000, immutable')
      .header('access-control-allow-origin', '*')
      .send(createReadStream(path));
  }
}
