import { RecordingMode, type RecordingModeSetting, type StreamList } from '@tally/contracts';
import { type ReactNode, useState } from 'react';
import { useApiQuery } from '../api/queries.js';
import { ErrorMessage } from '../components/feedback.js';
import { FormPanel, SelectField } from '../components/form.js';
import { MODE_LABELS } from '../format.js';
import { appPath } from './page-props.js';

const LAYOUTS = ['', 'grid', 'speaker', 'single-speaker'] as const;
type Layout = (typeof LAYOUTS)[number];

// Room composite last: it is the most expensive mode.
const MODES: readonly RecordingModeSetting[] = ['auto', ...RecordingMode.options.filter((m) => m !== 'room_composite'), 'room_composite'];

export function StartRecordingForm(props: {
  appId: string;
  onStart: (streamId: string, mode: RecordingModeSetting, layout: string) => Promise<void>;
}): ReactNode {
  const live = useApiQuery<StreamList>(appPath(props.appId, '/streams?status=live'));
  const [streamId, setStreamId] = useState('');
  const [mode, setMode] = useState<RecordingModeSetting>('auto');
  const [layout, setLayout] = useState<Layout>('');
  const [busy, setBusy] = useState(false);
  const streams = live.data?.items ?? [];
  const selected = streams.some((s) => s.id === streamId) ? streamId : (streams[0]?.id ?? '');
  const composite = mode === 'room_composite' || mode === 'auto';

  const submit = async (): Promise<void> => {
    if (!selected) return;
    setBusy(true);
    await props.onStart(selected, mode, composite ? layout : '');
    setBusy(false);
  };

  return (
    <FormPanel label="Start a recording" onSubmit={submit}>
      <SelectField
        label="Live stream"
        value={selected}
        options={streams.map((s) => ({ value: s.id, label: `${s.name} (${s.publishers} publishing)` }))}
        onChange={setStreamId}
        disabled={streams.length === 0}
        empty="no live stream"
      />
      <SelectField label="Mode" value={mode} options={MODES.map((m) => ({ value: m, label: MODE_LABELS[m] ?? m }))} onChange={setMode} />
      <SelectField
        label="Layout (room composite)"
        value={layout}
        options={LAYOUTS.map((l) => ({ value: l, label: l === '' ? 'none (default)' : l }))}
        onChange={setLayout}
        disabled={!composite}
      />
      <button type="submit" disabled={busy || !selected}>
        Start recording
      </button>
      {live.data && streams.length === 0 ? (
        <p className="muted-text wide">No live stream to record: a stream goes live when a publisher joins it.</p>
      ) : null}
      <ErrorMessage error={live.error} action="Loading live streams" />
    </FormPanel>
  );
}
