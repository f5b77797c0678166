import type { AppUsageView, AppView } from '@tally/contracts';
import type { ReactNode } from 'react';
import { Gauge } from '../components/gauge.js';
import { formatBytes, formatDuration } from '../format.js';

/** The app's storage: what its recordings and ladders hold against its cap, how long they are kept, how long one may run. */
export function StoragePanel({ storage, app }: { storage: AppUsageView['storage']; app: AppView }): ReactNode {
  const source = (field: keyof AppView['explicitStorage']): string =>
    typeof app.explicitStorage[field] === 'number' ? 'set by the operator' : 'operator default';
  return (
    <section aria-labelledby="storage-heading" className="panel">
      <h3 id="storage-heading">Storage</h3>
      {storage.limitMb === null ? (
        <p className="muted-text" aria-label="Storage used">
          {formatBytes(storage.usedBytes)} held by complete recordings and ladders; no storage cap.
        </p>
      ) : (
        <div className="gauges">
          <Gauge
            label="Storage"
            used={storage.usedMb}
            limit={storage.limitMb}
            format={(mb) => `${mb} MB`}
            detail={`complete recordings and ladders (${formatBytes(storage.usedBytes)}); cap ${source('maxStorageMb')}; at the cap a recording start is refused`}
          />
        </div>
      )}
      <dl className="compact">
        <dt>Retention</dt>
        <dd aria-label="Recording retention">
          {storage.recordingRetentionDays === null
            ? 'recordings are kept until deleted'
            : `recordings are deleted ${storage.recordingRetentionDays} day${storage.recordingRetentionDays === 1 ? '' : 's'} after they end (${source('recordingRetentionDays')})`}
        </dd>
        <dt>Maximum length</dt>
        <dd aria-label="Maximum recording length">
          {storage.maxRecordingDurationS === null
            ? 'none'
            : `${formatDuration(storage.maxRecordingDurationS)}, then the recording is stopped (${source('maxRecordingDurationS')})`}
        </dd>
      </dl>
    </section>
  );
}
