import { relative } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import type { FastifyReply } from 'fastify';
import { NotFoundError } from '../common/domain-error.js';
import { isFile, sendStaticFile } from '../common/static-files.js';
import { HlsBytesMeter } from './hls-bytes-meter.js';
import { HlsRepository } from './hls.repository.js';

/**
 * Serves a stream's playlists and segments for players and CDN pull zones. A playlist changes with
 * every segment, so caches keep it about one segment at most; a segment never changes once its
 * name is in a playlist, so it is immutable.
 */
@Injectable()
export class HlsFilesService {
  constructor(
    private readonly sessions: HlsRepository,
    private readonly bytes: HlsBytesMeter,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async serve(publicId: string, file: string, reply: FastifyReply): Promise<void> {
    const session = await this.sessions.servable(publicId);
    if (!session) throw new NotFoundError('HLS playlist');
    const playlist = file.endsWith('.m3u8');
    // Checked from the HLS directory down: a session's own directory is media-writable too.
    const root = this.config.hls.dir;
    const path = `${relative(root, session.dir)}/${file}`;
    // Purged segments (and a purged playlist) answer this API's own 404.
    if (!(await isFile(root, path))) throw new NotFoundError(playlist ? 'HLS playlist' : 'HLS segment');
    this.bytes.meter(session.appId, reply);
    const maxAge = session.status === 'stopped' ? session.segmentS : Math.max(1, Math.floor(session.segmentS / 2));
    await sendStaticFile(
      reply,
      root,
      path,
      {
        'content-type': playlist ? 'application/vnd.apple.mpegurl' : file.endsWith('.ts') ? 'video/mp2t' : 'video/mp4',
        'cache-control': playlist ? `public, max-age=${maxAge}` : 'public, max-age=31536000, immutable',
        'access-control-allow-origin': '*',
      },
      playlist ? 'HLS playlist' : 'HLS segment',
    );
  }
}
