import { type FormEvent, type ReactNode, useState } from 'react';
import { isRouteMissing } from '../api/errors.js';
import { RECORDING_MODES, type RecordingList, type RecordingModeSetting, type RecordingView, type StreamList } from '../api/types.js';
import { EmptyState, ErrorMessage, Loading, Notice, StatusBadge } from '../components/feedback.js';
import { downloadRecording, RecordingPlayer } from '../components/recording-player.js';
import { formatBytes, formatDuration, formatTime, MODE_LABELS } from '../format.js';
import { usePoll } from '../use-poll.js';
import { appPath, type PageProps } from './page-props.js';

const LAYOUTS = ['', 'grid', 'speaker', 'single-speaker'] as const;

export function RecordingsPage({ api, appId }: PageProps): ReactNode {
  const recordings = usePoll(`${appId}/recordings`, (signal) => api.get<RecordingList>(appPath(appId, '/recordings'), signal));
  const [playing, setPlaying] = useState<RecordingView>();
  const [actionError, setActionError] = useState<{ error: unknown; action: string }>();
  const [notice, setNotice] = useState<string>();

  const run = async (action: string, work: () => Promise<string>): Promise<void> => {
    setActionError(undefined);
    setNotice(undefined);
    try {
      setNotice(await work());
      recordings.reload();
    } catch (error) {
      setActionError({ error, action });
    }
  };

  if (isRouteMissing(recordings.error)) {
    return (
      <section aria-labelledby="recordings-heading">
        <h2 id="recordings-heading">Recordings</h2>
        <EmptyState title="Recordings are not available on this server.">This Tally API has no recordings routes yet.</EmptyState>
      </section>
    );
  }

  return (
    <section aria-labelledby="recordings-heading">
      <h2 id="recordings-heading">Recordings</h2>
      <StartRecordingForm
        api={api}
        appId={appId}
        onStart={(streamId, mode, layout) =>
          run('Recording', async () => {
            const started = await api.post<RecordingView>(appPath(appId, `/streams/${streamId}/recordings`), {
              mode,
              ...(layout ? { layout } : {}),
            });
            return `Recording ${started.id} is ${started.status} as ${started.mode.replace(/_/g, ' ')}: ${started.reason}`;
          })
        }
      />
      {actionError ? <ErrorMessage error={actionError.error} action={actionError.action} /> : null}
      {notice ? <Notice tone="success">{notice}</Notice> : null}
      <ErrorMessage error={recordings.error} action="Loading recordings" />
      {recordings.data === undefined ? (
        recordings.error ? null : (
          <Loading what="recordings" />
        )
      ) : recordings.data.items.length === 0 ? (
        <EmptyState title="No recordings yet.">Start one for a live stream above.</EmptyState>
      ) : (
        <table aria-label="Recordings">
          <thead>
            <tr>
              <th scope="col">Recording</th>
              <th scope="col">Status</th>
              <th scope="col">Mode</th>
              <th scope="col">Why this mode</th>
              <th scope="col">Duration</th>
              <th scope="col">Size</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {recordings.data.items.map((r) => (
              <tr key={r.id} data-recording-id={r.id}>
                <th scope="row">
                  <span className="id">{r.id}</span>
                  <div className="muted-text">
                    stream <span className="id">{r.streamId}</span>, {formatTime(r.startedAt ?? r.createdAt)}
                  </div>
                </th>
                <td>
                  <StatusBadge status={r.status} />
                  {r.error ? <div className="error-text">{r.error}</div> : null}
                </td>
                <td>{r.mode.replace(/_/g, ' ')}</td>
                <td className="reason">{r.reason}</td>
                <td>{formatDuration(r.durationS)}</td>
                <td>{formatBytes(r.sizeBytes)}</td>
                <td className="actions">
                  {r.status === 'starting' || r.status === 'active' ? (
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Stop recording ${r.id}`}
                      onClick={() =>
                        void run('Stopping the recording', async () => {
                          await api.post<RecordingView>(appPath(appId, `/recordings/${r.id}/stop`));
                          return `Recording ${r.id} is stopping; it turns complete once its file is checked.`;
                        })
                      }
                    >
                      Stop
                    </button>
                  ) : null}
                  {r.status === 'complete' ? (
                    <>
                      <button type="button" aria-label={`Play recording ${r.id}`} onClick={() => setPlaying(r)}>
                        Play
                      </button>
                      <button
                        type="button"
                        aria-label={`Download recording ${r.id}`}
                        onClick={() =>
                          void run('Downloading the recording', async () => {
                            await downloadRecording(api, r);
                            return `Recording ${r.id} downloaded.`;
                          })
                        }
                      >
                        Download
                      </button>
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {playing ? <RecordingPlayer key={playing.id} api={api} recording={playing} onClose={() => setPlaying(undefined)} /> : null}
    </section>
  );
}

function StartRecordingForm(props: {
  api: PageProps['api'];
  appId: string;
  onStart: (streamId: string, mode: RecordingModeSetting, layout: string) => Promise<void>;
}): ReactNode {
  const { api, appId } = props;
  const live = usePoll(`${appId}/streams?status=live`, (signal) => api.get<StreamList>(appPath(appId, '/streams?status=live'), signal));
  const [streamId, setStreamId] = useState('');
  const [mode, setMode] = useState<RecordingModeSetting>('auto');
  const [layout, setLayout] = useState('');
  const [busy, setBusy] = useState(false);
  const streams = live.data?.items ?? [];
  const selected = streams.some((s) => s.id === streamId) ? streamId : (streams[0]?.id ?? '');

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!selected) return;
    setBusy(true);
    await props.onStart(selected, mode, mode === 'room_composite' || mode === 'auto' ? layout : '');
    setBusy(false);
  };

  return (
    <form className="panel form-grid" aria-label="Start a recording" onSubmit={(e) => void submit(e)}>
      <label>
        Live stream
        <select value={selected} onChange={(e) => setStreamId(e.target.value)} disabled={streams.length === 0}>
          {streams.length === 0 ? <option value="">no live stream</option> : null}
          {streams.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name} ({s.publishers} publishing)
            </option>
          ))}
        </select>
      </label>
      <label>
        Mode
        <select value={mode} onChange={(e) => setMode(e.target.value as RecordingModeSetting)}>
          {(['auto', ...RECORDING_MODES.filter((m) => m !== 'room_composite'), 'room_composite'] as const).map((m) => (
            <option key={m} value={m}>
              {MODE_LABELS[m] ?? m}
            </option>
          ))}
        </select>
      </label>
      <label>
        Layout (room composite)
        <select value={layout} onChange={(e) => setLayout(e.target.value)} disabled={mode !== 'room_composite' && mode !== 'auto'}>
          {LAYOUTS.map((l) => (
            <option key={l} value={l}>
              {l === '' ? 'none (default)' : l}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy || !selected}>
        Start recording
      </button>
      {live.data && streams.length === 0 ? (
        <p className="muted-text wide">No live stream to record: a stream goes live when a publisher joins it.</p>
      ) : null}
      <ErrorMessage error={live.error} action="Loading live streams" />
    </form>
  );
}
