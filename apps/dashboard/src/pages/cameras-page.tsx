import { type FormEvent, type ReactNode, useState } from 'react';
import type { CameraList, CameraView, CreateCameraBody, CreatedCamera } from '../api/types.js';
import { CameraPreview } from '../components/camera-preview.js';
import { EmptyState, ErrorMessage, Loading, Notice, StatusBadge } from '../components/feedback.js';
import { formatTime } from '../format.js';
import { usePoll } from '../use-poll.js';
import { appPath, type PageProps } from './page-props.js';

/** ws-mjpeg cameras: whether each one is sending, its caps and viewers, a live still, and creating one. */
export function CamerasPage({ api, appId }: PageProps): ReactNode {
  const cameras = usePoll(`${appId}/cameras`, (signal) => api.get<CameraList>(appPath(appId, '/cameras'), signal));
  const [actionError, setActionError] = useState<{ error: unknown; action: string }>();
  const [created, setCreated] = useState<CreatedCamera>();
  const [notice, setNotice] = useState<string>();

  const create = async (body: CreateCameraBody): Promise<void> => {
    setActionError(undefined);
    setNotice(undefined);
    try {
      setCreated(await api.post<CreatedCamera>(appPath(appId, '/cameras'), body));
      cameras.reload();
    } catch (error) {
      setActionError({ error, action: 'Camera' });
    }
  };

  const remove = async (camera: CameraView): Promise<void> => {
    setActionError(undefined);
    setNotice(undefined);
    try {
      await api.delete(appPath(appId, `/cameras/${encodeURIComponent(camera.id)}`));
      if (created?.id === camera.id) setCreated(undefined);
      setNotice(`Camera “${camera.name}” deleted; its connection and viewers were closed.`);
      cameras.reload();
    } catch (error) {
      setActionError({ error, action: 'Deleting the camera' });
    }
  };

  return (
    <section aria-labelledby="cameras-heading">
      <h2 id="cameras-heading">Cameras</h2>
      <CreateCameraForm onCreate={create} />
      {actionError ? <ErrorMessage error={actionError.error} action={actionError.action} /> : null}
      {notice ? <Notice tone="success">{notice}</Notice> : null}
      {created ? (
        <div className="panel secret" role="status" aria-label="New camera">
          <p>
            Camera “{created.name}” created. The camera connects to the ingest URL with this key (as <code>Authorization: Bearer</code> or{' '}
            <code>?key=</code>) and sends one JPEG per WebSocket message. The key is shown only now.
          </p>
          <dl className="facts">
            <dt>Ingest URL</dt>
            <dd className="id">{created.ingestUrl}</dd>
            <dt>Camera key (shown once)</dt>
            <dd>
              <code>{created.key}</code>
            </dd>
          </dl>
        </div>
      ) : null}
      <ErrorMessage error={cameras.error} action="Loading cameras" />
      {cameras.data === undefined ? (
        cameras.error ? null : (
          <Loading what="cameras" />
        )
      ) : cameras.data.items.length === 0 ? (
        <EmptyState title="No cameras yet.">Create one above, then point an ESP32 or any WebSocket client at its ingest URL.</EmptyState>
      ) : (
        <table aria-label="Cameras">
          <thead>
            <tr>
              <th scope="col">Camera</th>
              <th scope="col">Status</th>
              <th scope="col">Last frame</th>
              <th scope="col">Caps</th>
              <th scope="col">Viewers</th>
              <th scope="col">Preview</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {cameras.data.items.map((c) => (
              <tr key={c.id} data-camera-id={c.id}>
                <th scope="row">
                  {c.name}
                  <div className="id muted-text">{c.id}</div>
                </th>
                <td>
                  <StatusBadge status={c.connected ? 'connected' : 'offline'} />
                </td>
                <td>{formatTime(c.lastFrameAt)}</td>
                <td>
                  {c.maxFps} fps, {c.maxFrameKb} KiB
                  <div className="muted-text">{c.bitrateKbps} kbps</div>
                </td>
                <td>{c.viewers}</td>
                <td>{c.connected ? <CameraPreview api={api} camera={c} /> : '—'}</td>
                <td className="actions">
                  <button type="button" className="danger" aria-label={`Delete camera ${c.name}`} onClick={() => void remove(c)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function CreateCameraForm({ onCreate }: { onCreate: (body: CreateCameraBody) => Promise<void> }): ReactNode {
  const [name, setName] = useState('');
  const [maxFps, setMaxFps] = useState('8');
  const [maxFrameKb, setMaxFrameKb] = useState('8');
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    await onCreate({ name: name.trim(), maxFps: Number(maxFps), maxFrameKb: Number(maxFrameKb) });
    setName('');
  };
  return (
    <form className="panel form-grid" aria-label="Create a camera" onSubmit={(e) => void submit(e)}>
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
    </form>
  );
}
