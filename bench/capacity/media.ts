import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { CreatedIngress, IngressView, RecordingView, StreamToken, StreamView } from '@tally/contracts';
import { type ApiClient, pushRtmp, stopPush, waitFor } from '@tally/testing';

/** An RTMP push through a Tally ingress into a stream's room: a real 640x360 publisher with audio. */
export type Push = Readonly<{ ingress: CreatedIngress; stop(): Promise<void> }>;

export async function startPush(client: ApiClient, appId: string, streamId: string, seconds: number, ingressLog: string): Promise<Push> {
  const created = await client.post<CreatedIngress>(`/v1/apps/${appId}/ingresses`, { streamId, kind: 'rtmp' });
  if (created.status !== 201) throw new Error(`create ingress: ${created.status} ${JSON.stringify(created.body)}`);
  const ingress = created.body;
  // LiveKit ingress refuses a publisher while the host's CPU is nearly all busy ("server capacity
  // exceeded"): on a shared host the push is retried until it is taken.
  let ffmpeg: ChildProcess | undefined;
  for (let attempt = 1; ; attempt++) {
    ffmpeg = pushRtmp(`${ingress.url}/${ingress.streamKey}`, seconds);
    const live = await streamLive(client, appId, streamId, 45_000).catch(() => false);
    if (live) break;
    await stopPush(ffmpeg);
    if (attempt === 5) {
      throw new Error(
        `no publisher after ${attempt} pushes\n--- ingress log (tail) ---\n${readFileSync(ingressLog, 'utf8').slice(-3_000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 5_000));
  }
  await waitFor(
    'ingress publishing',
    async () =>
      (await client.get<IngressView>(`/v1/apps/${appId}/ingresses/${ingress.id}`)).body.status === 'publishing' ? true : undefined,
    60_000,
  );
  return {
    ingress,
    async stop() {
      await stopPush(ffmpeg);
      await client.delete(`/v1/apps/${appId}/ingresses/${ingress.id}`);
    },
  };
}

export async function streamToken(
  client: ApiClient,
  appId: string,
  streamId: string,
  identity: string,
  role: 'viewer' | 'publisher' = 'viewer',
): Promise<StreamToken> {
  const minted = await client.post<StreamToken>(`/v1/apps/${appId}/streams/${streamId}/tokens`, { identity, role });
  if (minted.status !== 201) throw new Error(`mint token: ${minted.status} ${JSON.stringify(minted.body)}`);
  return minted.body;
}

/** Starts `count` recordings of one mode on a live stream and resolves once every one is active. */
export async function startRecordings(
  client: ApiClient,
  appId: string,
  streamId: string,
  mode: string,
  count: number,
): Promise<RecordingView[]> {
  const started: RecordingView[] = [];
  for (let i = 0; i < count; i++) {
    const response = await client.post<RecordingView>(`/v1/apps/${appId}/streams/${streamId}/recordings`, { mode });
    if (response.status !== 201) throw new Error(`start ${mode} recording: ${response.status} ${JSON.stringify(response.body)}`);
    started.push(response.body);
  }
  return Promise.all(started.map((r) => recordingIn(client, appId, r.id, ['active'])));
}

export async function stopRecordings(client: ApiClient, appId: string, recordings: readonly RecordingView[]): Promise<RecordingView[]> {
  await Promise.all(recordings.map((r) => client.post(`/v1/apps/${appId}/recordings/${r.id}/stop`)));
  return Promise.all(recordings.map((r) => recordingIn(client, appId, r.id, ['complete', 'failed'])));
}

function recordingIn(client: ApiClient, appId: string, id: string, statuses: RecordingView['status'][]): Promise<RecordingView> {
  return waitFor(
    `recording ${id} ${statuses.join('/')}`,
    async () => {
      const r = (await client.get<RecordingView>(`/v1/apps/${appId}/recordings/${id}`)).body;
      if (r.status === 'failed' && !statuses.includes('failed')) throw new Error(`recording ${id} failed: ${r.error ?? 'no reason'}`);
      return statuses.includes(r.status) ? r : undefined;
    },
    180_000,
  );
}

/** Resolves once the stream is live with at least one publisher. */
export function streamLive(client: ApiClient, appId: string, streamId: string, timeoutMs = 60_000): Promise<true> {
  return waitFor(
    `stream ${streamId} live with a publisher`,
    async () => {
      const s = (await client.get<StreamView>(`/v1/apps/${appId}/streams/${streamId}`)).body;
      return s.status === 'live' && s.publishers >= 1 ? true : undefined;
    },
    timeoutMs,
  );
}
