import type { AppView, WebhookDeliveryList, WebhookDeliveryView, WebhookEndpointView, WebhookSecretView } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { isRouteMissing } from '../api/errors.js';
import { useAction, useApi, useApiQuery } from '../api/queries.js';
import { DataTable } from '../components/data-table.js';
import { EmptyState, ErrorMessage, StatusBadge } from '../components/feedback.js';
import { ActionFeedback } from '../components/form.js';
import { Loaded, LoadedList } from '../components/loaded.js';
import { formatTime } from '../format.js';
import { appPath, type PageProps } from './page-props.js';
import { SettingsForm } from './webhook-settings-form.js';

export function WebhooksPage({ appId }: PageProps): ReactNode {
  const app = useApiQuery<AppView>(appPath(appId));
  return (
    <section aria-labelledby="webhooks-heading">
      <h2 id="webhooks-heading">Webhooks and recording settings</h2>
      <Loaded query={app} what="settings" action="Loading the app">
        {(data) => <SettingsForm key={data.id} app={data} />}
      </Loaded>
      <EndpointPanel appId={appId} />
      <SecretPanel appId={appId} secretSet={app.data?.webhookSecretSet} />
      <Deliveries appId={appId} />
    </section>
  );
}

const DISABLED_REASONS = {
  gone: 'the receiver answered 410 Gone',
  failing: 'every attempt failed for too long',
} as const;

function EndpointPanel({ appId }: { appId: string }): ReactNode {
  const api = useApi();
  const endpoint = useApiQuery<WebhookEndpointView>(appPath(appId, '/webhook-endpoint'));
  const action = useAction();
  const enable = (): Promise<void> =>
    action.run('Re-enabling the endpoint', async () => {
      await api.post<WebhookEndpointView>(appPath(appId, '/webhook-endpoint/enable'));
      return undefined;
    });
  if (isRouteMissing(endpoint.error)) return null;
  const e = endpoint.data;
  return (
    <section className="panel" aria-labelledby="endpoint-heading">
      <h3 id="endpoint-heading">Endpoint</h3>
      <ErrorMessage error={endpoint.error ?? action.error} action={endpoint.error ? 'Loading the endpoint' : action.action} />
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

function SecretPanel(props: { appId: string; secretSet: boolean | undefined }): ReactNode {
  const api = useApi();
  const [rotated, setRotated] = useState<WebhookSecretView>();
  const [graceH, setGraceH] = useState(24);
  const action = useAction();
  const rotate = (): Promise<void> =>
    action.run('Rotating the secret', async () => {
      setRotated(await api.post<WebhookSecretView>(appPath(props.appId, '/webhook-secret'), { gracePeriodS: graceH * 3600 }));
      return undefined;
    });
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
      <ErrorMessage error={action.error} action={action.action} />
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

function Deliveries({ appId }: { appId: string }): ReactNode {
  const api = useApi();
  const deliveries = useApiQuery<WebhookDeliveryList>(appPath(appId, '/webhook-deliveries?limit=100'));
  const action = useAction();
  const redeliver = (d: WebhookDeliveryView): Promise<void> =>
    action.run('Redelivering', async () => {
      await api.post<WebhookDeliveryView>(appPath(appId, `/webhook-deliveries/${d.id}/redeliver`));
      return `Event ${d.eventId} (${d.eventType}) queued for delivery again.`;
    });

  return (
    <section aria-labelledby="deliveries-heading">
      <h3 id="deliveries-heading">Delivery log</h3>
      {isRouteMissing(deliveries.error) ? (
        <EmptyState title="The webhook delivery log is not available on this server." />
      ) : (
        <>
          <ActionFeedback action={action} />
          <LoadedList
            query={deliveries}
            what="deliveries"
            empty={
              <EmptyState title="No deliveries yet.">
                Events are sent when a stream goes live or ends and when a recording starts, completes or fails.
              </EmptyState>
            }
          >
            {(items) => (
              <DataTable
                label="Webhook deliveries"
                rows={items}
                rowKey={(d) => d.id}
                rowAttributes={(d) => ({ 'data-delivery-id': d.id })}
                columns={[
                  {
                    header: 'Event',
                    cell: (d) => (
                      <>
                        {d.eventType}
                        <div className="id">{d.eventId}</div>
                        <div className="muted-text">{d.url}</div>
                      </>
                    ),
                  },
                  { header: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
                  { header: 'Attempts', cell: (d) => d.attempts },
                  { header: 'Last answer', cell: (d) => (d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '—')) },
                  { header: 'When', cell: deliveryWhen },
                ]}
                actions={(d) => (
                  <button type="button" onClick={() => void redeliver(d)} aria-label={`Redeliver ${d.eventType} ${d.eventId}`}>
                    Redeliver
                  </button>
                )}
              />
            )}
          </LoadedList>
        </>
      )}
    </section>
  );
}

function deliveryWhen(d: WebhookDeliveryView): string {
  if (d.deliveredAt) return `delivered ${formatTime(d.deliveredAt)}`;
  if (d.nextAttemptAt) return `next try ${formatTime(d.nextAttemptAt)}`;
  return formatTime(d.lastAttemptAt ?? d.createdAt);
}
