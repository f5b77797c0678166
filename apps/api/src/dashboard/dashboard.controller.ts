import { Controller, Get, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../routes/access.js';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { sendStaticFile } from '../common/static-files.js';
import { DashboardFiles } from './dashboard-files.js';

/**
 * The web dashboard's static build. Public because it is only HTML, JS and CSS: every piece of
 * data the page shows comes from the authenticated /v1 API with the key the user signs in with.
 */
@Controller('dashboard')
@Public()
export class DashboardController {
  constructor(private readonly files: DashboardFiles) {}

  @Get(['', '*'])
  async serve(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const found = await this.files.lookup(request.url);
    switch (found.kind) {
      case 'not_built':
        throw new DomainError(
          'upstream_unavailable',
          'the dashboard is not built on this server: run `npm run build:dashboard` in the Tally checkout, then reload',
        );
      case 'not_found':
        throw new NotFoundError('dashboard file');
      case 'file':
        break;
    }
    const { file } = found;
    const html = file.relative === 'index.html';
    await sendStaticFile(
      reply,
      file.root,
      file.relative,
      {
        'cache-control': file.cacheControl,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        // The page holds an API key: no inline script, no framing. LiveKit's signalling URL is another origin.
        ...(html ? { 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-frame-options': 'DENY' } : {}),
      },
      'dashboard file',
    );
  }
}

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self' ws: wss: http: https:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');
