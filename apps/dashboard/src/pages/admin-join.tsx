import { type CreateJoinTokenBody, JoinedNodeRole, type JoinTokenView } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useApi } from '../api/queries.js';
import { ErrorMessage } from '../components/feedback.js';
import { FormPanel, SelectField, ShownOnce, TextField } from '../components/form.js';
import { formatTime } from '../format.js';

const ROLE_HINT: Readonly<Record<JoinedNodeRole, string>> = {
  media: 'livekit-server: streams and WebRTC viewers',
  worker: 'egress and ingress: recordings, RTMP/WHIP ingest, CPU ladders',
  gpu: 'egress with NVENC: recordings and GPU ladders',
  control: 'a second API and worker (the origin needs --control-nodes)',
};

const ROLES = JoinedNodeRole.options.map((r) => ({ value: r, label: `${r}: ${ROLE_HINT[r]}` }));

/** A one-time join token and the exact install.sh command that adds a host to this origin's pool. */
export function JoinNodePanel(): ReactNode {
  const api = useApi();
  const [role, setRole] = useState<JoinedNodeRole>('media');
  const [name, setName] = useState('');
  const [issued, setIssued] = useState<JoinTokenView>();
  const [error, setError] = useState<unknown>();

  const submit = async (): Promise<void> => {
    setError(undefined);
    setIssued(undefined);
    // The token joins only this role and name.
    const body: CreateJoinTokenBody = { role, name: name.trim() };
    try {
      setIssued(await api.post<JoinTokenView>('/v1/nodes/join-tokens', body));
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <section aria-labelledby="join-heading">
      <h2 id="join-heading">Add a node</h2>
      <FormPanel label="Add a node" onSubmit={submit}>
        <SelectField label="Role" value={role} options={ROLES} onChange={setRole} />
        <TextField
          label="Node name"
          value={name}
          onChange={setName}
          placeholder="gpu-1"
          maxLength={253}
          required
          pattern="[A-Za-z0-9][A-Za-z0-9_.\-]*"
        />
        <button type="submit">Create join token</button>
      </FormPanel>
      <ErrorMessage error={error} action="Creating a join token" />
      {issued ? (
        <ShownOnce
          label="Join command"
          intro={`Run this as root on the new host, from a checkout of the same Tally version. The token works once and expires at ${formatTime(issued.expiresAt)}; it is shown only now.`}
        >
          <pre>
            <code>{issued.command}</code>
          </pre>
        </ShownOnce>
      ) : null}
    </section>
  );
}
