import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { isRouteMissing } from '../api/errors.js';
import {
  type AppView,
  RECORDING_MODES,
  type RecordingModeSetting,
  type WebhookDeliveryList,
  type WebhookDeliveryView,
  type WebhookEndpointView,
  type WebhookSecretView,
} from '../api/types.js';
import { EmptyState, ErrorMessage, Loading, Notice, StatusBadge } from '../components/feedback.js';
import { formatTime, MODE_LABELS } from '../format.js';
import { usePoll } from '../use-poll.js';
import { appPath, type PageProps } from './page-props.js';

export function WebhooksPage({ api, appId }: PageProps): ReactNode {
  const app = usePoll(`${appId}/app`, (signal) => api.get<AppView>(appPath(appId), signal));
  return (
    <section aria-labelledby="webhooks-heading">
      <h2 id="webhooks-heading">Webhooks and recording settings</h2>
      <ErrorMessage error={app.error} action="Loading the app" />
      {app.data ? (
        <SettingsForm key={app.data.id} api={api} app={app.data} onSaved={app.reload} />
      ) : app.error ? null : (
        <Loading what="settings" />
      )}
      <EndpointPanel api={api} appId={appId} />
      <SecretPanel api={api} appId={appId} secretSet={app.data?.webhookSecretSet} onRotated={app.reload} />
      <Deliveries api={api} appId={appId} />
    </section>
  );
}

function SettingsForm({ api, app, onSaved }: { api: PageProps['api']; app: AppView; onSaved: () => void }): ReactNode {
  const [url, setUrl] = useState(app.webhookUrl ?? '');
  const [mode, setMode] = useState<RecordingModeSetting>(app.recordingMode);
  const [fallback, setFallback] = useState(app.recordingFallback);
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  useEffect(() => setSaved(false), [url, mode, fallback]);

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    try {
      await api.patch<AppView>(appPath(app.id), {
        webhookUrl: url.trim() === '' ? null : url.trim(),
        recordingMode: mode,
        recordingFallback: fallback,
      });
      setSaved(true);
      onSaved();
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <form className="panel form-grid" aria-label="Webhook and recording settings" onSubmit={(e) => void submit(e)}>
      <label className="wide">
        Webhook URL
        <input
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://example.com/tally-events (empty: no webhooks)"
        />
      </label>
      <label>
        Recording mode
        <select value={mode} onChange={(e) => setMode(e.target.value as RecordingModeSetting)}>
          {(['auto', ...RECORDING_MODES] as const).map((m) => (
            <option key={m} value={m}>
              {MODE_LABELS[m] ?? m}
            </option>
          ))}
        </select>
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={fallback} onChange={(e) => setFallback(e.target.checked)} />
        Fall back to a cheaper mode when the chosen one does not fit
      </label>
      <button type="submit">Save settings</button>
      <div className="wide">
        <ErrorMessage error={error} action="Saving settings" />
        {saved ? <Notice tone="success">Settings saved.</Notice> : null}
      </div>
    </form>
  );
}

const DISABLED_REASONS = {
  gone: 'the receiver answered 410 Gone',
  failing: 'every attempt failed for too long',
} as const;

function EndpointPanel({ api, appId }: { api: PageProps['api']; appId: string }): ReactNode {
  const endpoint = usePoll(`${appId}/webhook-endpoint`, (signal) =>
    api.get<WebhookEndpointView>(appPath(appId, '/webhook-endpoint'), signal),
  );
  const [error, setError] = useState<unknown>();
  const enable = async (): Promise<void> => {
    setError(undefined);
    try {
      await api.post<WebhookEndpointView>(appPath(appId, '/webhook-endpoint/enable'));
      endpoint.reload();
    } catch (caught) {
      setError(caught);
    }
  };
  if (isRouteMissing(endpoint.error)) return null;
  const e = endpoint.data;
  return (
    <section className="panel" aria-labelledby="endpoint-heading">
      <h3 id="endpoint-heading">Endpoint</h3>
      <ErrorMessage error={endpoint.error ?? error} action="Loading the endpoint" />
      {e === undefined ? null : (
        <div role="status" aria-label="Endpoint state" data-endpoint-status={e.status}>
          <StatusBadge status={e.status} />{' '}
          {e.status === 'disabled' ? (
            <>
              Disabled {e.disabledAt ? formatTime(e.disabledAt) : ''}: {e.disabledReason ? DISABLED_REASONS[e.disabledReason] : ''}.
              Deliveries are not attempted until you re-enable it.{' '}
              <button type="button" onClick={() => void enable()}>
                Re-enable endpoint
              </button>
            </>
          ) : e.failingSince ? (
            `Failing since ${formatTime(e.failingSince)}; it is disabled if that goes on.`
          ) : (
            'Healthy.'
          )}
        </div>
      )}
    </section>
  );
}

function SecretPanel(props: { api: PageProps['api']; appId: string; secretSet: boolean | undefined; onRotated: () => void }): ReactNode {
  const [rotated, setRotated] = useState<WebhookSecretView>();
  const [graceH, setGraceH] = useState(24);
  const [error, setError] = useState<unknown>();
  const rotate = async (): Promise<void> => {
    setError(undefined);
    try {
      setRotated(await props.api.post<WebhookSecretView>(appPath(props.appId, '/webhook-secret'), { gracePeriodS: graceH * 3600 }));
      props.onRotated();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section className="panel" aria-labelledby="secret-heading">
      <h3 id="secret-heading">Signing secret</h3>
      <p className="muted-text">
        Webhooks are signed the Standard Webhooks way (<code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>): verify them with the <code>standardwebhooks</code> library of your language.{' '}
        {props.secretSet === undefined ? null : props.secretSet ? 'A secret is set.' : 'No secret is set yet.'}
      </p>
      <label>
        Keep signing with the previous secret for (hours)
        <input type="number" min={0} max={168} value={graceH} onChange={(e) => setGraceH(Number(e.target.value))} />
      </label>
      <button type="button" onClick={() => void rotate()}>
        Rotate secret
      </button>
      <ErrorMessage error={error} action="Rotating the secret" />
      {rotated ? (
        <div className="secret" role="status">
          <p>
            New secret (shown once, copy it now; later deliveries are signed with it
            {rotated.previousSecretExpiresAt ? `, and with the previous one until ${formatTime(rotated.previousSecretExpiresAt)}` : ''}
            ):
          </p>
          <code aria-label="New webhook secret">{rotated.secret}</code>{' '}
          <button type="button" onClick={() => void navigator.clipboard?.writeText(rotated.secret)}>
            Copy
          </button>
        </div>
      ) : null}
    </section>
  );
}

function Deliveries({ api, appId }: { api: PageProps['api']; appId: string }): ReactNode {
  const deliveries = usePoll(`${appId}/deliveries`, (signal) =>
    api.get<WebhookDeliveryList>(appPath(appId, '/webhook-deliveries?limit=100'), signal),
  );
  const [actionError, setActionError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const redeliver = async (d: WebhookDeliveryView): Promise<void> => {
    setActionError(undefined);
    setNotice(undefined);
    try {
      await api.post<WebhookDeliveryView>(appPath(appId, `/webhook-deliveries/${d.id}/redeliver`));
      setNotice(`Event ${d.eventId} (${d.eventType}) queued for delivery again.`);
      deliveries.reload();
    } catch (caught) {
      setActionError(caught);
    }
  };

  return (
    <section aria-labelledby="deliveries-heading">
      <h3 id="deliveries-heading">Delivery log</h3>
      {isRouteMissing(deliveries.error) ? (
        <EmptyState title="The webhook delivery log is not available on this server." />
      ) : (
        <>
          <ErrorMessage error={deliveries.error} action="Loading deliveries" />
          <ErrorMessage error={actionError} action="Redelivering" />
          {notice ? <Notice tone="success">{notice}</Notice> : null}
          {deliveries.data === undefined ? (
            deliveries.error ? null : (
              <Loading what="deliveries" />
            )
          ) : deliveries.data.items.length === 0 ? (
            <EmptyState title="No deliveries yet.">
              Events are sent when a stream goes live or ends and when a recording starts, completes or fails.
            </EmptyState>
          ) : (
            <table aria-label="Webhook deliveries">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">When</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.data.items.map((d) => (
                  <tr key={d.id} data-delivery-id={d.id}>
                    <th scope="row">
                      {d.eventType}
                      <div className="id">{d.eventId}</div>
                      <div className="muted-text">{d.url}</div>
                    </th>
                    <td>
                      <StatusBadge status={d.status} />
                    </td>
                    <td>{d.attempts}</td>
                    <td>{d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '—')}</td>
                    <td>
                      {d.deliveredAt
                        ? `delivered ${formatTime(d.deliveredAt)}`
                        : d.nextAttemptAt
                          ? `next try ${formatTime(d.nextAttemptAt)}`
                          : formatTime(d.lastAttemptAt ?? d.createdAt)}
                    </td>
                    <td className="actions">
                      <button type="button" onClick={() => void redeliver(d)} aria-label={`Redeliver ${d.eventType} ${d.eventId}`}>
                        Redeliver
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
