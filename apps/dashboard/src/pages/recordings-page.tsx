import type { RecordingList, RecordingModeSetting, RecordingView } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { isRouteMissing } from '../api/errors.js';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState, StatusBadge } from '../components/feedback.js';
import { ActionFeedback } from '../components/form.js';
import { LoadedList } from '../components/loaded.js';
import { downloadRecording, RecordingPlayer } from '../components/recording-player.js';
import { formatBytes, formatDuration, formatTime } from '../format.js';
import { appPath, type PageProps } from './page-props.js';
import { StartRecordingForm } from './start-recording-form.js';

export function RecordingsPage({ appId }: PageProps): ReactNode {
  const api = useApi();
  const recordings = useApiQuery<RecordingList>(appPath(appId, '/recordings'));
  const [playing, setPlaying] = useState<RecordingView>();
  const action = useAction();

  if (isRouteMissing(recordings.error)) {
    return (
      <section aria-labelledby="recordings-heading">
        <h2 id="recordings-heading">Recordings</h2>
        <EmptyState title="Recordings are not available on this server.">This Tally API has no recordings routes yet.</EmptyState>
      </section>
    );
  }

  const start = (streamId: string, mode: RecordingModeSetting, layout: string): Promise<void> =>
    action.run('Recording', async () => {
      const started = await api.post<RecordingView>(appPath(appId, `/streams/${streamId}/recordings`), {
        mode,
        ...(layout ? { layout } : {}),
      });
      return `Recording ${started.id} is ${started.status} as ${started.mode.replace(/_/g, ' ')}: ${started.reason}`;
    });
  const stop = (r: RecordingView): Promise<void> =>
    action.run('Stopping the recording', async () => {
      await api.post<RecordingView>(appPath(appId, `/recordings/${r.id}/stop`));
      return `Recording ${r.id} is stopping; it turns complete once its file is checked.`;
    });
  const remove = (r: RecordingView): Promise<void> =>
    action.run('Deleting the recording', async () => {
      await api.delete(appPath(appId, `/recordings/${r.id}`));
      return `Recording ${r.id} deleted.`;
    });
  const download = (r: RecordingView): Promise<void> =>
    action.run('Downloading the recording', async () => {
      await downloadRecording(api, r);
      return `Recording ${r.id} downloaded.`;
    });

  return (
    <section aria-labelledby="recordings-heading">
      <h2 id="recordings-heading">Recordings</h2>
      <StartRecordingForm appId={appId} onStart={start} />
      <ActionFeedback action={action} />
      <LoadedList
        query={recordings}
        what="recordings"
        empty={<EmptyState title="No recordings yet.">Start one for a live stream above.</EmptyState>}
      >
        {(items) => (
          <DataTable
            label="Recordings"
            rows={items}
            rowKey={(r) => r.id}
            rowAttributes={(r) => ({ 'data-recording-id': r.id })}
            columns={[
              {
                header: 'Recording',
                cell: (r) => (
                  <>
                    <span className="id">{r.id}</span>
                    <div className="muted-text">
                      stream <span className="id">{r.streamId}</span>, {formatTime(r.startedAt ?? r.createdAt)}
                    </div>
                  </>
                ),
              },
              {
                header: 'Status',
                cell: (r) => (
                  <>
                    <StatusBadge status={r.status} />
                    {r.error ? <div className="error-text">{r.error}</div> : null}
                    {r.endReason && r.endReason !== 'stopped' ? (
                      <div className="muted-text">ended: {r.endReason.replace(/_/g, ' ')}</div>
                    ) : null}
                  </>
                ),
              },
              { header: 'Mode', cell: (r) => r.mode.replace(/_/g, ' ') },
              { header: 'Why this mode', cell: (r) => r.reason, className: 'reason' },
              { header: 'Duration', cell: (r) => formatDuration(r.durationS) },
              { header: 'Size', cell: (r) => formatBytes(r.sizeBytes) },
            ]}
            actions={(r) => <RecordingActions recording={r} onStop={stop} onPlay={setPlaying} onDownload={download} onDelete={remove} />}
          />
        )}
      </LoadedList>
      {playing ? <RecordingPlayer key={playing.id} api={api} recording={playing} onClose={() => setPlaying(undefined)} /> : null}
    </section>
  );
}

function RecordingActions(props: {
  recording: RecordingView;
  onStop: (r: RecordingView) => Promise<void>;
  onPlay: (r: RecordingView) => void;
  onDownload: (r: RecordingView) => Promise<void>;
  onDelete: (r: RecordingView) => Promise<void>;
}): ReactNode {
  const r = props.recording;
  if (r.status === 'starting' || r.status === 'active') {
    return (
      <button type="button" className="danger" aria-label={`Stop recording ${r.id}`} onClick={() => void props.onStop(r)}>
        Stop
      </button>
    );
  }
  const remove = (
    <button type="button" className="danger" aria-label={`Delete recording ${r.id}`} onClick={() => void props.onDelete(r)}>
      Delete
    </button>
  );
  if (r.status === 'failed') return remove;
  if (r.status !== 'complete') return null;
  return (
    <>
      <button type="button" aria-label={`Play recording ${r.id}`} onClick={() => props.onPlay(r)}>
        Play
      </button>
      <button type="button" aria-label={`Download recording ${r.id}`} onClick={() => void props.onDownload(r)}>
        Download
      </button>
      {remove}
    </>
  );
}
