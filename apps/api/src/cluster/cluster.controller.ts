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
      "Exchange a join token for the cluster's settings (the node's own Redis user, LiveKit keys, webhook URL; for worker/gpu nodes the object store, with an account of the node's own on the bundled store); 401 for a token that is used, expired or made for another role or name; 503 when the object store's key broker cannot be reached",
    responses: { 200: ClusterSettings, 401: ErrorBody, 409: ErrorBody, 503: ErrorBody },
  })
  @Post('join')
  @Public()
  @HttpCode(200)
  join(@Body(new ZodPipe(JoinNodeBody)) body: JoinNodeBody): Promise<ClusterSettings> {
    return this.cluster.join(body);
  }

  @ApiRoute({
    summary:
      "Remove a joined node: its object store account (bundled store) and its Redis user are deleted at once (the store refuses its key; open connections closed), it leaves the pool and its status is dropped; 503 when the object store's key broker cannot be reached (nothing changed)",
    responses: { 204: null, 404: ErrorBody, 503: ErrorBody },
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
    summary:
      'A joined node leaves (install.sh --leave), authenticated by its own Redis password: removed as by DELETE /v1/nodes/{nodeId} (503, nothing changed, when the object store key broker cannot be reached)',
    responses: { 204: null, 401: ErrorBody, 503: ErrorBody },
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
