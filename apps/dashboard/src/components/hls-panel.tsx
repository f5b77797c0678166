import type { HlsView, StreamView } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { isNotFound, isRouteMissing } from '../api/errors.js';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { appPath } from '../pages/page-props.js';
import { formatTime } from '../format.js';
import { ErrorMessage, Loading, StatusBadge } from './feedback.js';

type Preset = HlsView['preset'];

/** The stream's live HLS: its newest session (status, playlist URL) and starting or stopping it. */
export function HlsPanel({ stream }: { stream: StreamView }): ReactNode {
  const api = useApi();
  const path = appPath(stream.appId, `/streams/${encodeURIComponent(stream.id)}/hls`);
  const hls = useApiQuery<HlsView>(path);
  const [preset, setPreset] = useState<Preset>('standard');
  const action = useAction();

  if (isRouteMissing(hls.error)) return null;
  const session = isNotFound(hls.error) ? undefined : hls.data;
  const open = session?.status === 'starting' || session?.status === 'live';
  const act = (name: string, work: () => Promise<HlsView>): Promise<void> => action.run(name, () => work().then(() => undefined));

  return (
    <section className="panel" aria-labelledby="hls-heading">
      <h3 id="hls-heading">Live HLS</h3>
      {hls.data === undefined && hls.error === null ? <Loading what="the HLS session" /> : null}
      {isNotFound(hls.error) ? (
        <p className="muted-text">No HLS session for this stream. Start one to get a playlist a player or CDN can pull.</p>
      ) : (
        <ErrorMessage error={hls.error ?? undefined} action="Loading the HLS session" />
      )}
      {session ? (
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={session.status} />
          </dd>
          <dt>Playlist</dt>
          <dd className="id">{session.purged ? `${session.playlistUrl} (segments deleted)` : session.playlistUrl}</dd>
          <dt>Preset</dt>
          <dd>
            {session.preset.replace('_', ' ')}, {session.segmentS} s segments, {session.audio ? 'with audio' : 'video only'}
          </dd>
          <dt>Started</dt>
          <dd>{formatTime(session.createdAt)}</dd>
          {session.stoppedAt ? (
            <>
              <dt>Stopped</dt>
              <dd>
                {formatTime(session.stoppedAt)}
                {session.purgeAt && !session.purged ? ` (segments kept until ${formatTime(session.purgeAt)})` : ''}
              </dd>
            </>
          ) : null}
          {session.error ? (
            <>
              <dt>Error</dt>
              <dd className="error-text">{session.error}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      <div className="row">
        {open ? (
          <button
            type="button"
            className="danger"
            disabled={action.busy}
            onClick={() => void act('Stopping HLS', () => api.delete<HlsView>(path))}
          >
            Stop HLS
          </button>
        ) : stream.status !== 'ended' ? (
          <>
            <label className="inline">
              Preset{' '}
              <select value={preset} onChange={(e) => setPreset(e.target.value as Preset)}>
                <option value="standard">standard (2 s segments)</option>
                <option value="low_latency">low latency (1 s segments)</option>
              </select>
            </label>
            <button
              type="button"
              disabled={action.busy}
              onClick={() => void act('Starting HLS', () => api.post<HlsView>(path, { preset }))}
            >
              Start HLS
            </button>
          </>
        ) : null}
      </div>
      <ErrorMessage error={action.error} action={action.action} />
    </section>
  );
}
