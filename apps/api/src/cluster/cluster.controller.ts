import { Body, Controller, Delete, Headers, HttpCode, Param, Post } from '@nestjs/common';
import { ClusterSettings, CreateJoinTokenBody, ErrorBody, JoinNodeBody, JoinTokenView, NodeDrainView, NodeParams } from '@tally/contracts';
import type { z } from 'zod';
import { AdminOnly, Public } from '../routes/access.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { ClusterService } from './cluster.service.js';
import { NodeRemovalService } from './node-removal.service.js';
import { ApiRoute } from '../routes/api-route.js';

const bearer = (authorization: string | undefined) => /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];

@Controller('v1/nodes')
export class ClusterController {
  constructor(
    private readonly cluster: ClusterService,
    private readonly removal: NodeRemovalService,
  ) {}

  @ApiRoute({
    summary:
      'A one-time, expiring token for ./install.sh --join on a new host, bound to the role and name given (shown once); 409 when this origin accepts no nodes',
    responses: { 201: JoinTokenView, 409: ErrorBody },
  })
  @Post('join-tokens')
  @AdminOnly()
  issueToken(@Body(new ZodPipe(CreateJoinTokenBody)) body: CreateJoinTokenBody): Promise<JoinTokenView> {
    return this.cluster.issueToken(body);
  }

  /** The join token is the credential. */
  @ApiRoute({
    summary:
      "Exchange a join token for the cluster's settings (the node's own Redis user, LiveKit keys, webhook URL); 401 for a token that is used, expired or made for another role or name",
    responses: { 200: ClusterSettings, 401: ErrorBody, 409: ErrorBody },
  })
  @Post('join')
  @Public()
  @HttpCode(200)
  join(@Body(new ZodPipe(JoinNodeBody)) body: JoinNodeBody): Promise<ClusterSettings> {
    return this.cluster.join(body);
  }

  @ApiRoute({
    summary:
      'Remove a joined node: its Redis user is deleted at once (open connections closed), it leaves the pool and its status is dropped',
    responses: { 204: null },
  })
  @Delete(':nodeId')
  @AdminOnly()
  @HttpCode(204)
  remove(@Param(new ZodPipe(NodeParams)) p: z.infer<typeof NodeParams>): Promise<void> {
    return this.removal.remove(p.nodeId);
  }

  /** The node's own Redis password is the credential (install.sh --leave). */
  @ApiRoute({
    summary:
      'A joined node starts leaving (install.sh --leave), authenticated by its own Redis password: it is set draining; answers what still runs there',
    responses: { 200: NodeDrainView },
    auth: 'node',
  })
  @Post(':nodeId/drain')
  @Public()
  @HttpCode(200)
  drain(
    @Param(new ZodPipe(NodeParams)) p: z.infer<typeof NodeParams>,
    @Headers('authorization') authorization: string | undefined,
  ): Promise<NodeDrainView> {
    return this.removal.drain(p.nodeId, bearer(authorization));
  }

  /** The node's own Redis password is the credential (install.sh --leave). */
  @ApiRoute({
    summary: 'A joined node leaves (install.sh --leave), authenticated by its own Redis password: removed as by DELETE /v1/nodes/{nodeId}',
    responses: { 204: null },
    auth: 'node',
  })
  @Post(':nodeId/leave')
  @Public()
  @HttpCode(204)
  leave(
    @Param(new ZodPipe(NodeParams)) p: z.infer<typeof NodeParams>,
    @Headers('authorization') authorization: string | undefined,
  ): Promise<void> {
    return this.removal.leave(p.nodeId, bearer(authorization));
  }
}
