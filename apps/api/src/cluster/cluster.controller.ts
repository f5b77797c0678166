import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ClusterSettings, CreateJoinTokenBody, ErrorBody, JoinNodeBody, JoinTokenView } from '@tally/contracts';
import { AdminOnly, Public } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { ClusterService } from './cluster.service.js';
import { ApiRoute } from '../openapi/api-route.js';

@Controller('v1/nodes')
export class ClusterController {
  constructor(private readonly cluster: ClusterService) {}

  @ApiRoute({
    summary: 'A one-time, expiring token for ./install.sh --join on a new host (shown once); 409 when this origin accepts no nodes',
    responses: { 201: JoinTokenView, 400: ErrorBody, 401: ErrorBody, 409: ErrorBody },
  })
  @Post('join-tokens')
  @AdminOnly()
  issueToken(@Body(new ZodPipe(CreateJoinTokenBody)) body: CreateJoinTokenBody): Promise<JoinTokenView> {
    return this.cluster.issueToken(body);
  }

  /** The join token is the credential. */
  @ApiRoute({
    summary: "Exchange a join token for the cluster's settings (Redis URL, LiveKit keys, webhook URL); 401 for a used or expired token",
    responses: { 200: ClusterSettings, 400: ErrorBody, 401: ErrorBody, 409: ErrorBody },
  })
  @Post('join')
  @Public()
  @HttpCode(200)
  join(@Body(new ZodPipe(JoinNodeBody)) body: JoinNodeBody): Promise<ClusterSettings> {
    return this.cluster.join(body);
  }
}
