import { Controller, Get, Headers, Param, Res } from '@nestjs/common';
import { ErrorBody, NodeArtifactParams, NodeArtifacts } from '@tally/contracts';
import type { FastifyReply } from 'fastify';
import { Public } from '../routes/access.js';
import { sendStaticFile } from '../common/static-files.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { ApiRoute } from '../routes/api-route.js';
import { NodeArtifactsService } from './node-artifacts.service.js';

/** Public in the API key sense: the credential is a valid join token, checked by the service. */
@Controller('v1/nodes/artifacts')
@Public()
export class NodeArtifactsController {
  constructor(private readonly artifacts: NodeArtifactsService) {}

  @ApiRoute({
    summary:
      'What this origin has built for its platform (LiveKit binaries, runtimes, the services), for ./install.sh --join; needs a valid join token as bearer (not spent by this)',
    responses: { 200: NodeArtifacts, 401: ErrorBody, 404: ErrorBody },
  })
  @Get()
  manifest(@Headers('authorization') authorization: string | undefined): Promise<NodeArtifacts> {
    return this.artifacts.manifest(authorization);
  }

  @ApiRoute({
    summary:
      'One file of the manifest, streamed (HTTP range requests supported); its sha256 is in the manifest and the X-Tally-Sha256 header',
    responses: { 200: null, 206: null, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 416: null },
  })
  @Get(':name')
  async file(
    @Headers('authorization') authorization: string | undefined,
    @Param(new ZodPipe(NodeArtifactParams)) p: NodeArtifactParams,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const file = await this.artifacts.file(authorization, p.name);
    await sendStaticFile(reply, file.root, file.file, file.headers, 'artifact');
  }
}
