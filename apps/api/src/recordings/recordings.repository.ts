import { Injectable } from '@nestjs/common';
import type { RecordingListQuery } from '@tally/contracts';
import { PrismaService, type Recording, type RecordingMode } from '@tally/db';

export type NewRecording = Readonly<{
  id: string;
  appId: string;
  streamId: string;
  mode: RecordingMode;
  reason: string;
  layout: string | undefined;
  nodeId: string;
  storage: 'local' | 's3';
  location: string;
}>;

/** Recording rows; every read is scoped by appId. */
@Injectable()
export class RecordingsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(recording: NewRecording): Promise<Recording> {
    return this.prisma.recording.create({ data: { ...recording, layout: recording.layout ?? null } });
  }

  find(appId: string, id: string): Promise<Recording | null> {
    return this.prisma.recording.findFirst({ where: { id, appId } });
  }

  list(appId: string, query: RecordingListQuery): Promise<Recording[]> {
    return this.prisma.recording.findMany({
      where: { appId, ...(query.status ? { status: query.status } : {}), ...(query.streamId ? { streamId: query.streamId } : {}) },
      orderBy: { createdAt: 'desc' },
      take: 500,
    });
  }

  /** Stores the egress id unless a LiveKit webhook already did. */
  async setEgress(id: string, egressId: string): Promise<void> {
    await this.prisma.recording.updateMany({ where: { id, egressId: null }, data: { egressId } });
  }
}
