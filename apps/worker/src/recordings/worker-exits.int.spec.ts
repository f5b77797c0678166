import type { RecordingMode } from '@tally/contracts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RecordingLifecycleStack, startRecordingLifecycleStack } from '../../test/recording-lifecycle-stack.js';
import { RecordingRowsRepository } from './recording-rows.repository.js';
import { WorkerExits } from './worker-exits.service.js';

const STARTED = new Date('2026-11-29T12:00:00Z');
const EXITED = new Date('2026-11-29T12:05:00Z');

describe(WorkerExits.name, () => {
  let stack: RecordingLifecycleStack;
  let sut: WorkerExits;

  beforeAll(async () => {
    stack = await startRecordingLifecycleStack(inject('postgresUrl'), 'worker exits');
    sut = new WorkerExits(new RecordingRowsRepository(stack.prisma), stack.lifecycle);
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** An active recording of `mode` on the node, its reservation confirmed; passthrough gets two active egresses. */
  async function recordingOn(nodeId: string, mode: RecordingMode): Promise<string> {
    const id = await stack.activeRecording(nodeId, { mode, createdAt: STARTED });
    if (mode === 'passthrough')
      for (const track of ['video', 'audio'] as const)
        await stack.prisma.recordingEgress.create({
          data: {
            recordingId: id,
            track,
            trackSid: `TR_${track}`,
            egressId: `EG_${id}_${track}`,
            state: 'active',
            startedAt: STARTED,
            mediaStartedAt: STARTED,
            location: `${stack.appId}/${id}.${track}.webm`,
          },
        });
    return id;
  }

  const exit = (nodeId: string) => ({
    nodeId,
    kind: 'egress' as const,
    workerId: 'egress',
    reason: 'killed by SIGKILL',
    at: EXITED.toISOString(),
  });

  it('cuts a passthrough recording where its egress worker ended: its files are joined up to there, and it completes saying so', async () => {
    const id = await recordingOn('exit-pass', 'passthrough');

    expect(await sut.handle(exit('exit-pass'))).toEqual({ recordingsFailed: 0 });

    expect(await stack.prisma.recording.findUnique({ where: { id } })).toMatchObject({
      status: 'ending',
      endedAt: EXITED,
      error: 'video egress failed: egress worker on exit-pass: killed by SIGKILL; the file keeps what was recorded until then',
    });
    const egresses = await stack.prisma.recordingEgress.findMany({ where: { recordingId: id } });
    expect(egresses.map((e) => e.state)).toEqual(['failed', 'failed']);
    // Handed to the finaliser, which joins the two files as they were cut; the capacity is free.
    expect(await stack.finaliseJobs.getJob(id)).toBeDefined();
    expect(await stack.ledger.held(id)).toBeUndefined();
  });

  it('fails the other recordings the worker was writing, and leaves other nodes alone', async () => {
    const composite = await recordingOn('exit-comp', 'track_composite');
    const elsewhere = await recordingOn('exit-other', 'passthrough');

    expect(await sut.handle(exit('exit-comp'))).toEqual({ recordingsFailed: 1 });

    expect(await stack.prisma.recording.findUnique({ where: { id: composite } })).toMatchObject({
      status: 'failed',
      error: 'egress worker on exit-comp: killed by SIGKILL',
    });
    expect(await stack.ledger.held(composite)).toBeUndefined();
    expect((await stack.prisma.recording.findUnique({ where: { id: elsewhere } }))?.status).toBe('active');
    expect((await stack.ledger.held(elsewhere))?.confirmed).toBe(true);
  });
});
