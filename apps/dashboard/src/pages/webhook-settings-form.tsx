import { type AppView, RecordingFormat, RecordingMode, type RecordingModeSetting } from '@tally/contracts';
import { type ReactNode, useEffect, useState } from 'react';
import { useAction, useApi } from '../api/queries.js';
import { ErrorMessage, Notice } from '../components/feedback.js';
import { FormPanel, SelectField } from '../components/form.js';
import { FORMAT_LABELS, MODE_LABELS } from '../format.js';
import { appPath } from './page-props.js';

const MODES: readonly RecordingModeSetting[] = ['auto', ...RecordingMode.options];

export function SettingsForm({ app }: { app: AppView }): ReactNode {
  const api = useApi();
  const [url, setUrl] = useState(app.webhookUrl ?? '');
  const [mode, setMode] = useState<RecordingModeSetting>(app.recordingMode);
  const [fallback, setFallback] = useState(app.recordingFallback);
  const [format, setFormat] = useState<RecordingFormat>(app.recordingFormat);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  useEffect(() => setSaved(false), [url, mode, fallback, format]);

  const submit = (): Promise<void> =>
    action.run('Saving settings', async () => {
      await api.patch<AppView>(appPath(app.id), {
        webhookUrl: url.trim() === '' ? null : url.trim(),
        recordingMode: mode,
        recordingFallback: fallback,
        recordingFormat: format,
      });
      setSaved(true);
      return undefined;
    });

  return (
    <FormPanel label="Webhook and recording settings" onSubmit={submit}>
      <label className="wide">
        Webhook URL
        <input
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://example.com/tally-events (empty: no webhooks)"
        />
      </label>
      <SelectField
        label="Recording mode"
        value={mode}
        options={MODES.map((m) => ({ value: m, label: MODE_LABELS[m] ?? m }))}
        onChange={setMode}
      />
      <SelectField
        label="File from one publisher"
        value={format}
        options={RecordingFormat.options.map((f) => ({ value: f, label: FORMAT_LABELS[f] ?? f }))}
        onChange={setFormat}
      />
      <label className="checkbox">
        <input type="checkbox" checked={fallback} onChange={(e) => setFallback(e.target.checked)} />
        Fall back to a cheaper mode when the chosen one does not fit
      </label>
      <button type="submit">Save settings</button>
      <div className="wide">
        <ErrorMessage error={action.error} action={action.action} />
        {saved ? <Notice tone="success">Settings saved.</Notice> : null}
      </div>
    </FormPanel>
  );
}
