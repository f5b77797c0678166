import { Module } from '@nestjs/common';
import { ClusterController } from './cluster.controller.js';
import { ClusterService } from './cluster.service.js';
import { JoinTokenStore } from './join-tokens.store.js';
import { NodeArtifactsController } from './node-artifacts.controller.js';
import { NodeArtifactsService } from './node-artifacts.service.js';
import { NodeArtifactsStore } from './node-artifacts.store.js';
import { NodeCredentialsRepository } from './node-credentials.repository.js';
import { NodeCredentialsService } from './node-credentials.service.js';
import { NodeLivekitKeys } from './node-livekit-keys.js';
import { NodeRemovalService } from './node-removal.service.js';
import { ObjectStoreKeys } from './object-store-keys.js';
import { RedisAcl } from './redis-acl.js';
import { SentinelDirectory } from './sentinel-directory.js';

@Module({
  controllers: [ClusterController, NodeArtifactsController],
  providers: [
    ClusterService,
    JoinTokenStore,
    NodeArtifactsService,
    NodeArtifactsStore,
    NodeCredentialsRepository,
    NodeCredentialsService,
    NodeLivekitKeys,
    NodeRemovalService,
    ObjectStoreKeys,
    RedisAcl,
    SentinelDirectory,
  ],
})
export class ClusterModule {}
