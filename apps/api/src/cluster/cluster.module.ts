import { Module } from '@nestjs/common';
import { ClusterController } from './cluster.controller.js';
import { ClusterService } from './cluster.service.js';
import { JoinTokenStore } from './join-tokens.store.js';
import { NodeCredentialsRepository } from './node-credentials.repository.js';
import { NodeCredentialsService } from './node-credentials.service.js';
import { NodeRemovalService } from './node-removal.service.js';
import { RedisAcl } from './redis-acl.js';

@Module({
  controllers: [ClusterController],
  providers: [ClusterService, JoinTokenStore, NodeCredentialsRepository, NodeCredentialsService, NodeRemovalService, RedisAcl],
})
export class ClusterModule {}
