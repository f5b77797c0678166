import { type AppView, type CapacityCheckResult, WorkloadKind } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useApi } from '../api/queries.js';
import { ErrorMessage } from '../components/feedback.js';
import { FormPanel, SelectField } from '../components/form.js';

const KINDS = WorkloadKind.options.map((k) => ({ value: k, label: k }));

/** Would this be admitted now? Reserves nothing; names the limit that would refuse it. */
export function WhatIfPanel({ apps }: { apps: AppView[] }): ReactNode {
  const api = useApi();
  const [appId, setAppId] = useState('');
  const [kind, setKind] = useState<WorkloadKind>('egress.room_composite');
  const [count, setCount] = useState('1');
  const [result, setResult] = useState<CapacityCheckResult>();
  const [error, setError] = useState<unknown>();
  const selected = apps.some((a) => a.id === appId) ? appId : (apps[0]?.id ?? '');

  // A check changes nothing, so it refreshes nothing: plain state rather than a mutation.
  const check = async (): Promise<void> => {
    setError(undefined);
    setResult(undefined);
    try {
      setResult(await api.post<CapacityCheckResult>(`/v1/apps/${selected}/capacity/check`, { kind, count: Number(count) }));
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <section aria-labelledby="whatif-heading" className="panel">
      <h2 id="whatif-heading">Capacity what-if</h2>
      <FormPanel className="form-grid" label="Capacity check" onSubmit={check}>
        <SelectField
          label="For app"
          value={selected}
          options={apps.map((a) => ({ value: a.id, label: a.name }))}
          onChange={setAppId}
          disabled={apps.length === 0}
        />
        <SelectField label="Workload" value={kind} options={KINDS} onChange={setKind} />
        <label>
          How many
          <input type="number" min={1} max={10000} value={count} onChange={(e) => setCount(e.target.value)} />
        </label>
        <button type="submit" disabled={!selected}>
          Check
        </button>
      </FormPanel>
      <ErrorMessage error={error} action="Checking capacity" />
      {result ? (
        <p role="status" className={`message ${result.admitted ? 'message-success' : 'message-warning'}`}>
          {result.admitted
            ? `${count} × ${kind} would be admitted now.`
            : `${count} × ${kind} would be refused (${result.code.replace(/_/g, ' ')}): ${result.resource} has ${result.used} of ${result.limit} in use, ${result.requested} requested.`}
        </p>
      ) : null}
    </section>
  );
}
