import { Body, Controller, Get, Param, Patch } from '@nestjs/common';
import { type NodeList, NodeParams, type NodeView, UpdateNodeBody, type WorkerList } from '@tally/contracts';
import type { z } from 'zod';
import { AdminOnly } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { NodesService } from './nodes.service.js';

@Controller('v1/nodes')
@AdminOnly()
export class NodesController {
  constructor(private readonly nodes: NodesService) {}

  @Get()
  list(): Promise<NodeList> {
    return this.nodes.list();
  }

  @Get(':nodeId/workers')
  workers(@Param(new ZodPipe(NodeParams)) p: z.infer<typeof NodeParams>): Promise<WorkerList> {
    return this.nodes.workersOf(p.nodeId);
  }

  @Patch(':nodeId')
  update(
    @Param(new ZodPipe(NodeParams)) p: z.infer<typeof NodeParams>,
    @Body(new ZodPipe(UpdateNodeBody)) body: UpdateNodeBody,
  ): Promise<NodeView> {
    return this.nodes.setStatus(p.nodeId, body);
  }
}
