import type { CameraList, CameraView, CreateCameraBody, CreatedCamera } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { CameraPreview } from '../components/camera-preview.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState, StatusBadge } from '../components/feedback.js';
import { ActionFeedback, ConfirmButton, FormPanel, ShownOnce } from '../components/form.js';
import { LoadedList } from '../components/loaded.js';
import { formatTime } from '../format.js';
import { appPath, type PageProps } from './page-props.js';

/** ws-mjpeg cameras: whether each one is sending, its caps and viewers, a live still, and creating one. */
export function CamerasPage({ appId }: PageProps): ReactNode {
  const api = useApi();
  const cameras = useApiQuery<CameraList>(appPath(appId, '/cameras'));
  const action = useAction();
  const [created, setCreated] = useState<CreatedCamera>();

  const create = (body: CreateCameraBody): Promise<void> =>
    action.run('Camera', async () => {
      setCreated(await api.post<CreatedCamera>(appPath(appId, '/cameras'), body));
      return undefined;
    });
  const remove = (camera: CameraView): Promise<void> =>
    action.run('Deleting the camera', async () => {
      await api.delete(appPath(appId, `/cameras/${encodeURIComponent(camera.id)}`));
      if (created?.id === camera.id) setCreated(undefined);
      return `Camera “${camera.name}” deleted; its connection and viewers were closed.`;
    });

  return (
    <section aria-labelledby="cameras-heading">
      <h2 id="cameras-heading">Cameras</h2>
      <CreateCameraForm onCreate={create} />
      <ActionFeedback action={action} />
      {created ? (
        <ShownOnce
          label="New camera"
          intro={
            <>
              Camera “{created.name}” created. The camera connects to the ingest URL with this key (as <code>Authorization: Bearer</code> or{' '}
              <code>?key=</code>) and sends one JPEG per WebSocket message. The key is shown only now.
            </>
          }
          facts={[
            ['Ingest URL', created.ingestUrl],
            ['Camera key (shown once)', <code key="key">{created.key}</code>],
          ]}
        />
      ) : null}
      <LoadedList
        query={cameras}
        what="cameras"
        empty={
          <EmptyState title="No cameras yet.">Create one above, then point an ESP32 or any WebSocket client at its ingest URL.</EmptyState>
        }
      >
        {(items) => (
          <DataTable
            label="Cameras"
            rows={items}
            rowKey={(c) => c.id}
            rowAttributes={(c) => ({ 'data-camera-id': c.id })}
            columns={[
              {
                header: 'Camera',
                cell: (c) => (
                  <>
                    {c.name}
                    <div className="id muted-text">{c.id}</div>
                  </>
                ),
              },
              { header: 'Status', cell: (c) => <StatusBadge status={c.connected ? 'connected' : 'offline'} /> },
              { header: 'Last frame', cell: (c) => formatTime(c.lastFrameAt) },
              {
                header: 'Caps',
                cell: (c) => (
                  <>
                    {c.maxFps} fps, {c.maxFrameKb} KiB
                    <div className="muted-text">{c.bitrateKbps} kbps</div>
                  </>
                ),
              },
              { header: 'Viewers', cell: (c) => c.viewers },
              { header: 'Preview', cell: (c) => (c.connected ? <CameraPreview api={api} camera={c} /> : '—') },
            ]}
            actions={(c) => (
              <ConfirmButton
                text="Delete"
                label={`Delete camera ${c.name}`}
                question={`Delete camera “${c.name}” and close its viewers?`}
                onConfirm={() => void remove(c)}
              />
            )}
          />
        )}
      </LoadedList>
    </section>
  );
}

function CreateCameraForm({ onCreate }: { onCreate: (body: CreateCameraBody) => Promise<void> }): ReactNode {
  const [name, setName] = useState('');
  const [maxFps, setMaxFps] = useState('8');
  const [maxFrameKb, setMaxFrameKb] = useState('8');
  const submit = async (): Promise<void> => {
    await onCreate({ name: name.trim(), maxFps: Number(maxFps), maxFrameKb: Number(maxFrameKb) });
    setName('');
  };
  return (
    <FormPanel label="Create a camera" onSubmit={submit}>
      <label>
        Camera name
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </label>
      <label>
        Max fps
        <input type="number" min={1} max={60} value={maxFps} onChange={(e) => setMaxFps(e.target.value)} required />
      </label>
      <label>
        Max frame (KiB)
        <input type="number" min={1} max={2048} value={maxFrameKb} onChange={(e) => setMaxFrameKb(e.target.value)} required />
      </label>
      <button type="submit" disabled={name.trim() === ''}>
        Create camera
      </button>
    </FormPanel>
  );
}
