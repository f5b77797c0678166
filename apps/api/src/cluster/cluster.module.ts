import { Module } from '@nestjs/common';
import { ClusterController } from './cluster.controller.js';
import { ClusterService } from './cluster.service.js';
import { JoinTokenStore } from './join-tokens.store.js';
import { NodeArtifactsController } from './node-artifacts.controller.js';
import { NodeArtifactsService } from './node-artifacts.service.js';
import { NodeArtifactsStore } from './node-artifacts.store.js';

@Module({
  controllers: [ClusterController, NodeArtifactsController],
  providers: [ClusterService, JoinTokenStore, NodeArtifactsService, NodeArtifactsStore],
})
export class ClusterModule {}
