import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { type ClusterSettings, CreateJoinTokenBody, JoinNodeBody, type JoinTokenView } from '@tally/contracts';
import { AdminOnly, Public } from '../auth/principal.js';
import { ZodPipe } from '../common/zod.pipe.js';
import { ClusterService } from './cluster.service.js';

@Controller('v1/nodes')
export class ClusterController {
  constructor(private readonly cluster: ClusterService) {}

  @Post('join-tokens')
  @AdminOnly()
  issueToken(@Body(new ZodPipe(CreateJoinTokenBody)) body: CreateJoinTokenBody): Promise<JoinTokenView> {
    return this.cluster.issueToken(body);
  }

  /** The join token is the credential. */
  @Post('join')
  @Public()
  @HttpCode(200)
  join(@Body(new ZodPipe(JoinNodeBody)) body: JoinNodeBody): Promise<ClusterSettings> {
    return this.cluster.join(body);
  }
}
