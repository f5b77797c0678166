import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { NodeList, NodeParams, NodeView, UpdateNodeBody, WorkerList } from '@tally/contracts';
import type { z } from 'zod';
import { AdminOnly } from '../routes/access.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { NodesService } from './nodes.service.js';
import { ApiRoute } from '../routes/api-route.js';

@Controller('v1/nodes')
@AdminOnly()
export class NodesController {
  constructor(private readonly nodes: NodesService) {}

  @ApiRoute({ summary: "Nodes from their agents' heartbeats: budget, status, reserved", responses: { 200: NodeList } })
  @Get()
  list(): Promise<NodeList> {
    return this.nodes.list();
  }

  @ApiRoute({
    summary: "The node's media workers (egress, ingress) as its agent runs them: limits, RSS, state, uptime, last exit",
    responses: { 200: WorkerList },
  })
  @Get(':nodeId/workers')
  workers(@Param(new ZodPipe(NodeParams)) p: z.infer<typeof NodeParams>): Promise<WorkerList> {
    return this.nodes.workersOf(p.nodeId);
  }

  @ApiRoute({
    summary: 'Drain, disable or re-activate a node (draining and disabled nodes take no new work)',
    responses: { 200: NodeView },
  })
  @Patch(':nodeId')
  update(
    @Param(new ZodPipe(NodeParams)) p: z.infer<typeof NodeParams>,
    @Body(new ZodPipe(UpdateNodeBody)) body: UpdateNodeBody,
  ): Promise<NodeView> {
    return this.nodes.setStatus(p.nodeId, body);
  }
}
