import { randomBytes } from 'node:crypto';
import { newId } from '@tally/contracts';
import type { App, HlsSession, Prisma, PrismaClient, Recording, Stream } from '@tally/db';

type Overrides<T> = Partial<T>;

/**
 * Test rows written straight to PostgreSQL, each with plain defaults a test overrides only where it
 * matters (`rows.newRecording({ appId, streamId, status: 'active' })`). For state no request can
 * make (a recording that is already complete, a session whose retention has passed); what a user
 * can create goes through the API (`newTenant`, `newStream`).
 */
export class TestRows {
  constructor(private readonly prisma: PrismaClient) {}

  newApp(data: Overrides<Prisma.AppUncheckedCreateInput> = {}): Promise<App> {
    return this.prisma.app.create({ data: { id: newId('app'), name: 'a test app', ...data } });
  }

  newStream(data: Overrides<Prisma.StreamUncheckedCreateInput> & { appId: string }): Promise<Stream> {
    const id = data.id ?? newId('str');
    return this.prisma.stream.create({ data: { id, name: 'a test stream', room: `${data.appId}.${id}`, ...data } });
  }

  /** A complete local recording by default (`location`: `<appId>/<id>.mp4`, below the recordings directory). */
  newRecording(data: Overrides<Prisma.RecordingUncheckedCreateInput> & { appId: string; streamId: string }): Promise<Recording> {
    const id = data.id ?? newId('rec');
    return this.prisma.recording.create({
      data: {
        id,
        mode: 'track_composite',
        status: 'complete',
        reason: 'seeded',
        nodeId: 'seeded',
        storage: 'local',
        location: `${data.appId}/${id}.mp4`,
        ...data,
      },
    });
  }

  /** A live composite session by default, writing to `dir`. */
  newHlsSession(
    data: Overrides<Prisma.HlsSessionUncheckedCreateInput> & { appId: string; streamId: string; dir: string },
  ): Promise<HlsSession> {
    return this.prisma.hlsSession.create({
      data: {
        id: newId('hls'),
        mode: 'composite',
        preset: 'seeded',
        segmentS: 2,
        audio: true,
        status: 'live',
        nodeId: 'seeded',
        publicId: randomBytes(16).toString('hex'),
        ...data,
      },
    });
  }
}
