import { type FormEvent, type ReactNode, useState } from 'react';
import type { Api } from '../api/client.js';
import { type CreateJoinTokenBody, JOINED_NODE_ROLES, type JoinedNodeRole, type JoinTokenView } from '../api/types.js';
import { ErrorMessage } from '../components/feedback.js';
import { formatTime } from '../format.js';

const ROLE_HINT: Readonly<Record<JoinedNodeRole, string>> = {
  media: 'livekit-server: streams and WebRTC viewers',
  worker: 'egress and ingress: recordings, RTMP/WHIP ingest, CPU ladders',
  gpu: 'egress with NVENC: recordings and GPU ladders',
};

/** A one-time join token and the exact install.sh command that adds a host to this origin's pool. */
export function JoinNodePanel({ api }: { api: Api }): ReactNode {
  const [role, setRole] = useState<JoinedNodeRole>('media');
  const [name, setName] = useState('');
  const [issued, setIssued] = useState<JoinTokenView>();
  const [error, setError] = useState<unknown>();

  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    setError(undefined);
    setIssued(undefined);
    const body: CreateJoinTokenBody = { role, ...(name.trim() === '' ? {} : { name: name.trim() }) };
    try {
      setIssued(await api.post<JoinTokenView>('/v1/nodes/join-tokens', body));
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <section aria-labelledby="join-heading">
      <h2 id="join-heading">Add a node</h2>
      <form className="panel form-grid" aria-label="Add a node" onSubmit={(e) => void submit(e)}>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as JoinedNodeRole)}>
            {JOINED_NODE_ROLES.map((r) => (
              <option key={r} value={r}>
                {r}: {ROLE_HINT[r]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Node name
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="gpu-1"
            maxLength={253}
            pattern="[A-Za-z0-9][A-Za-z0-9_.\-]*"
          />
        </label>
        <button type="submit">Create join token</button>
      </form>
      <ErrorMessage error={error} action="Creating a join token" />
      {issued ? (
        <div className="panel secret" role="status" aria-label="Join command">
          <p>
            Run this as root on the new host, from a checkout of the same Tally version. The token works once and expires at{' '}
            {formatTime(issued.expiresAt)}; it is shown only now.
          </p>
          <pre>
            <code>{issued.command}</code>
          </pre>
        </div>
      ) : null}
    </section>
  );
}
