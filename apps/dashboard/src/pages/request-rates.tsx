import type { AppView } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { fieldError } from '../api/errors.js';
import { useAction, useApi } from '../api/queries.js';
import { ActionFeedback, FormPanel } from '../components/form.js';
import { appPath } from './page-props.js';

type RateField = 'requestsPerMinute' | 'startsPerMinute';

const RATES: readonly { field: RateField; label: string; counts: string }[] = [
  { field: 'requestsPerMinute', label: 'Requests', counts: "every request with one of the app's keys, except starts" },
  { field: 'startsPerMinute', label: 'Starts', counts: 'each of: start a recording, start HLS, create an ingress (counted per route)' },
];

/** How a rate reads everywhere: the limit per minute and who chose it. */
export function describeRate(app: AppView, field: RateField): string {
  const set = typeof app.rateLimits.explicit[field] === 'number';
  return `${app.rateLimits[field]} per minute, ${set ? 'set by the operator' : 'default'}`;
}

/** The app's effective request and start rates, read-only: only the operator changes them. */
export function RequestRates({ app }: { app: AppView }): ReactNode {
  return (
    <section aria-labelledby="rates-heading">
      <h3 id="rates-heading">Request rates</h3>
      <p className="muted-text">
        How fast this app&apos;s keys may ask, counted in short windows; over it the API answers 429 with <code>retry-after</code>. The
        operator sets these rates.
      </p>
      <table aria-label="Request rates" className="compact">
        <thead>
          <tr>
            <th scope="col">Budget</th>
            <th scope="col">Limit</th>
            <th scope="col">Set by</th>
            <th scope="col">Counts</th>
          </tr>
        </thead>
        <tbody>
          {RATES.map(({ field, label, counts }) => (
            <tr key={field}>
              <th scope="row">{label}</th>
              <td>{app.rateLimits[field]} per minute</td>
              <td>{typeof app.rateLimits.explicit[field] === 'number' ? 'the operator' : 'default'}</td>
              <td>{counts}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/**
 * The operator's rate overrides for one app: a number sets the rate, an empty field returns it to
 * the default (`null` in `PATCH /v1/apps/{id}`). The API validates; its 400 shows beside the field.
 */
export function RateLimitsForm({ app }: { app: AppView }): ReactNode {
  const api = useApi();
  const action = useAction();
  const [values, setValues] = useState<Record<RateField, string>>({
    requestsPerMinute: String(app.rateLimits.explicit.requestsPerMinute ?? ''),
    startsPerMinute: String(app.rateLimits.explicit.startsPerMinute ?? ''),
  });

  const submit = (): Promise<void> =>
    action.run('Saving the request rates', async () => {
      const toOverride = (v: string): number | null => (v.trim() === '' ? null : Number(v));
      const saved = await api.patch<AppView>(appPath(app.id), {
        rateLimits: { requestsPerMinute: toOverride(values.requestsPerMinute), startsPerMinute: toOverride(values.startsPerMinute) },
      });
      return `Request rates of “${saved.name}”: requests ${describeRate(saved, 'requestsPerMinute')}; starts ${describeRate(saved, 'startsPerMinute')}.`;
    });

  return (
    <FormPanel label={`Request rates of ${app.name}`} onSubmit={submit}>
      <h3 className="wide">Request rates of “{app.name}” (operator)</h3>
      {RATES.map(({ field, label }) => {
        const error = fieldError(action.error, `rateLimits.${field}`);
        const errorId = `rate-error-${field}`;
        return (
          <div key={field}>
            <label>
              {label} per minute (empty = default)
              <input
                type="number"
                value={values[field]}
                placeholder={`default (now ${app.rateLimits[field]})`}
                aria-invalid={error ? true : undefined}
                aria-describedby={error ? errorId : undefined}
                onChange={(e) => setValues((v) => ({ ...v, [field]: e.target.value }))}
              />
            </label>
            {error ? (
              <p id={errorId} className="field-error">
                {error}
              </p>
            ) : null}
          </div>
        );
      })}
      <button type="submit">Save rates</button>
      <div className="wide">
        <ActionFeedback action={action} />
      </div>
    </FormPanel>
  );
}
