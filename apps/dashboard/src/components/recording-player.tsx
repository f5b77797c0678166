import { type ReactNode, useEffect, useState } from 'react';
import type { Api } from '../api/client.js';
import type { RecordingView } from '@tally/contracts';
import { formatBytes } from '../format.js';
import { ErrorMessage, Loading } from './feedback.js';

/**
 * Plays a complete recording. `<video src>` cannot send the Authorization header, so the file is
 * fetched with the key and played from a blob URL (revoked when the player closes).
 */
export function RecordingPlayer({ api, recording, onClose }: { api: Api; recording: RecordingView; onClose: () => void }): ReactNode {
  const [url, setUrl] = useState<string>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    let cancelled = false;
    let objectUrl: string | undefined;
    api.blob(recordingFilePath(recording)).then(
      (blob) => {
        if (cancelled) return;
        objectUrl = URL.createObjectURL(blob);
        setUrl(objectUrl);
      },
      (e: unknown) => {
        if (!cancelled) setError(e);
      },
    );
    return () => {
      cancelled = true;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [api, recording]);

  return (
    <section className="panel" aria-label={`Playing recording ${recording.id}`}>
      <div className="panel-header">
        <h3>Recording {recording.id}</h3>
        <button type="button" onClick={onClose}>
          Close player
        </button>
      </div>
      <ErrorMessage error={error} action="Loading the recording" />
      {url ? (
        <video className="video" src={url} controls autoPlay muted aria-label={`Recording ${recording.id}`} />
      ) : error ? null : (
        <Loading what={`the recording (${formatBytes(recording.sizeBytes)})`} />
      )}
    </section>
  );
}

export function recordingFilePath(recording: RecordingView): string {
  return `/v1/apps/${encodeURIComponent(recording.appId)}/recordings/${encodeURIComponent(recording.id)}/file`;
}

/** Saves the file under its id, through the same authenticated fetch. */
export async function downloadRecording(api: Api, recording: RecordingView): Promise<void> {
  const blob = await api.blob(recordingFilePath(recording));
  const url = URL.createObjectURL(blob);
  const extension = recording.location.split('.').pop() ?? 'mp4';
  const link = document.createElement('a');
  link.href = url;
  link.download = `${recording.id}.${extension}`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
