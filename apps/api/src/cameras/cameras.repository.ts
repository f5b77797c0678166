import { Injectable } from '@nestjs/common';
import { type Camera, PrismaService } from '@tally/db';

export type NewCamera = Readonly<{
  id: string;
  appId: string;
  name: string;
  maxFps: number;
  maxFrameKb: number;
  keyHash: string;
  nodeId: string;
}>;

/** Camera rows; reads by id are scoped by appId, the ingest finds its camera by the key's hash. */
@Injectable()
export class CamerasRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(camera: NewCamera): Promise<Camera> {
    return this.prisma.camera.create({ data: camera });
  }

  find(appId: string, id: string): Promise<Camera | null> {
    return this.prisma.camera.findFirst({ where: { id, appId, deletedAt: null } });
  }

  findByKeyHash(keyHash: string): Promise<Camera | null> {
    return this.prisma.camera.findFirst({ where: { keyHash, deletedAt: null } });
  }

  list(appId: string): Promise<Camera[]> {
    return this.prisma.camera.findMany({ where: { appId, deletedAt: null }, orderBy: { createdAt: 'desc' }, take: 500 });
  }
}
