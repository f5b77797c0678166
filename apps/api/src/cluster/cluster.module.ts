import { Module } from '@nestjs/common';
import { ClusterController } from './cluster.controller.js';
import { ClusterService } from './cluster.service.js';
import { JoinTokenStore } from './join-tokens.store.js';

@Module({ controllers: [ClusterController], providers: [ClusterService, JoinTokenStore] })
export class ClusterModule {}
