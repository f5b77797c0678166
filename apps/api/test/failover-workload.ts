import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { RecordingView, StreamToken, StreamView, WebhookDeliveryList } from '@tally/contracts';
import { type ApiClient, createStream, createTenant, waitFor } from '@tally/testing';
import { joinAndPublish, type Publisher, tracksUp } from '@tally/testing/media';
import { recordingIn } from './recording-client.js';
import type { SignedReceiver } from './signed-receiver.js';

const run = promisify(execFile);

/** What runs on the platform while its Redis primary is killed: media, a recording and a webhook backlog. */
export type MediaWorkload = Readonly<{
  appId: string;
  client: ApiClient;
  stream: StreamView;
  recording: RecordingView;
  publisher: Publisher;
  /** Deliveries waiting for the app's endpoint when the workload was handed over. */
  pendingAtStart: number;
}>;

/**
 * An app whose webhook endpoint is down (answers 503), with a stream a real publisher sends video and
 * audio to, a passthrough recording of it that is active, and a second stream a publisher joined and
 * that was then ended: their events wait in the backlog.
 */
export async function startMediaWorkload(admin: ApiClient, receiver: SignedReceiver): Promise<MediaWorkload> {
  const { app, client } = await createTenant(admin, 'failover media');
  expect200(await client.patch(`/v1/apps/${app.id}`, { webhookUrl: receiver.url }));
  receiver.secret = (await client.post<{ secret: string }>(`/v1/apps/${app.id}/webhook-secret`)).body.secret;
  receiver.refusing = true;

  const publishTo = async (stream: StreamView, video: boolean): Promise<Publisher> => {
    const token = await client.post<StreamToken>(`/v1/apps/${app.id}/streams/${stream.id}/tokens`, { identity: 'host', role: 'publisher' });
    const publisher = await joinAndPublish(token.body.url, token.body.token, { video });
    await waitFor(
      `stream ${stream.name} live`,
      async () => ((await client.get<StreamView>(`/v1/apps/${app.id}/streams/${stream.id}`)).body.status === 'live' ? true : undefined),
      60_000,
    );
    return publisher;
  };
  const brief = await createStream(client, app.id, 'brief');
  await (await publishTo(brief, false)).stop();
  expect200(await client.delete(`/v1/apps/${app.id}/streams/${brief.id}`));

  const stream = await createStream(client, app.id, 'on air');
  const publisher = await publishTo(stream, true);
  await tracksUp(client, app.id, stream.id);
  const started = await client.post<RecordingView>(`/v1/apps/${app.id}/streams/${stream.id}/recordings`, { mode: 'passthrough' });
  if (started.status !== 201) throw new Error(`recording: ${started.status} ${JSON.stringify(started.body)}`);
  const recording = await recordingIn(client, app.id, started.body.id, ['active', 'failed']);
  if (recording.status !== 'active') throw new Error(`recording ${recording.id} ${recording.status}: ${recording.error}`);

  // stream.live twice, stream.ended and recording.started, refused by the endpoint and waiting.
  const pendingAtStart = await waitFor(
    'a backlog of four deliveries',
    async () => {
      const items = (await deliveries(client, app.id)).items;
      const pending = items.filter((d) => d.status === 'pending' && d.attempts > 0);
      if (pending.length >= 4) return pending.length;
      // waitFor reports the last error when it times out: what the backlog held.
      throw new Error(JSON.stringify(items.map((d) => `${d.eventType} ${d.status} ×${d.attempts} ${d.lastStatusCode ?? d.lastError}`)));
    },
    60_000,
  );
  return { appId: app.id, client, stream, recording, publisher, pendingAtStart };
}

export async function deliveries(client: ApiClient, appId: string): Promise<WebhookDeliveryList> {
  const list = await client.get<WebhookDeliveryList>(`/v1/apps/${appId}/webhook-deliveries?limit=500`);
  if (list.status !== 200) throw new Error(`webhook-deliveries: ${list.status}`);
  return list.body;
}

export type Probed = Readonly<{ durationS: number; codecs: string[]; largestVideoGapS: number }>;

/** The file's duration and codecs, and the longest time between two consecutive video packets. */
export async function probeRecording(path: string): Promise<Probed> {
  const format = JSON.parse(
    (await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_name', '-of', 'json', path])).stdout,
  ) as { format: { duration: string }; streams: { codec_name: string }[] };
  const packets = (
    await run('ffprobe', ['-v', 'error', '-select_streams', 'v', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', path], {
      maxBuffer: 64 * 1024 * 1024,
    })
  ).stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number)
    .filter((t) => Number.isFinite(t))
    .sort((a, b) => a - b);
  let largestVideoGapS = 0;
  for (let i = 1; i < packets.length; i++) largestVideoGapS = Math.max(largestVideoGapS, packets[i]! - packets[i - 1]!);
  return {
    durationS: Number(format.format.duration),
    codecs: format.streams.map((s) => s.codec_name).sort(),
    largestVideoGapS,
  };
}

function expect200(response: { status: number; body: unknown }): void {
  if (response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(response.body)}`);
}
