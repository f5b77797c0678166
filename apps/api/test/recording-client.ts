import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordingView } from '@tally/contracts';
import { type ApiClient, waitFor } from '@tally/testing';
import { expect } from 'vitest';

/** Polls a recording through the API until it reaches one of `statuses`. */
export function recordingIn(
  client: ApiClient,
  appId: string,
  id: string,
  statuses: RecordingView['status'][],
  timeoutMs = 120_000,
): Promise<RecordingView> {
  return waitFor(
    `recording ${id} to be ${statuses.join(' or ')}`,
    async () => {
      const r = (await client.get<RecordingView>(`/v1/apps/${appId}/recordings/${id}`)).body;
      return statuses.includes(r.status) ? r : undefined;
    },
    timeoutMs,
  );
}

/** Downloads a complete recording through the API, as an app would, into a temp file. */
export async function download(client: ApiClient, appId: string, recording: RecordingView): Promise<string> {
  const response = await client.raw(`/v1/apps/${appId}/recordings/${recording.id}/file`);
  expect(response.status).toBe(200);
  const path = join(tmpdir(), `${recording.id}.${recording.location.split('.').pop() ?? 'bin'}`);
  writeFileSync(path, Buffer.from(await response.arrayBuffer()));
  return path;
}
