import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { NotFoundError } from '../common/domain-error.js';
import { isFile, sendStaticFile } from '../common/static-files.js';
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
    const playlist = file.endsWith('.m3u8');
    // Purged segments (and a purged playlist) answer this API's own 404.
    if (!(await isFile(session.dir, file))) throw new NotFoundError(playlist ? 'HLS playlist' : 'HLS segment');
    const maxAge = session.status === 'stopped' ? session.segmentS : Math.max(1, Math.floor(session.segmentS / 2));
    await sendStaticFile(reply, session.dir, file, {
      'content-type': playlist ? 'application/vnd.apple.mpegurl' : file.endsWith('.ts') ? 'video/mp2t' : 'video/mp4',
      'cache-control': playlist ? `public, max-age=${maxAge}` : 'public, max-age=31536000, immutable',
      'access-control-allow-origin': '*',
    });
  }
}
