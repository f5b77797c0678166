import { type ReactNode, useState } from 'react';
import { FormPanel } from '../components/form.js';

export function CreateStreamForm({ onCreate }: { onCreate: (name: string) => Promise<void> }): ReactNode {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (): Promise<void> => {
    setBusy(true);
    await onCreate(name);
    setBusy(false);
    setName('');
  };
  return (
    <FormPanel className="inline-form" label="Create a stream" onSubmit={submit}>
      <label>
        Stream name <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} placeholder="launch" />
      </label>
      <button type="submit" disabled={busy}>
        Create stream
      </button>
    </FormPanel>
  );
}

export function OpenStreamForm({ onOpen }: { onOpen: (streamId: string) => void }): ReactNode {
  const [id, setId] = useState('');
  return (
    <FormPanel className="inline-form" label="Open a stream by id" onSubmit={() => (id.trim() !== '' ? onOpen(id.trim()) : undefined)}>
      <label>
        Stream id <input value={id} onChange={(e) => setId(e.target.value)} placeholder="str_…" />
      </label>
      <button type="submit">Open</button>
    </FormPanel>
  );
}
