import { Inject, Injectable } from '@nestjs/common';
import { type StorageSettings, storageRefusal, storageSettings, toMb } from '@tally/capacity';
import { CONFIG, type Config } from '@tally/config';
import type { AppUsageView } from '@tally/contracts';
import { LimitRefusedError } from '../common/domain-error.js';
import { StorageRepository } from './storage.repository.js';

export type StorageColumns = Readonly<{
  maxStorageMb: number | null;
  recordingRetentionDays: number | null;
  maxRecordingDurationS: number | null;
}>;

/** An app's storage cap, retention and recording length in effect, and the storage it holds. */
@Injectable()
export class AppStorage {
  constructor(
    private readonly storage: StorageRepository,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  settings(app: StorageColumns): StorageSettings {
    return storageSettings(app, this.config.appDefaults);
  }

  async usage(appId: string, app: StorageColumns): Promise<AppUsageView['storage']> {
    const settings = this.settings(app);
    const usedBytes = await this.storage.bytesHeld(appId);
    return {
      usedBytes,
      usedMb: toMb(usedBytes),
      limitMb: settings.maxStorageMb ?? null,
      recordingRetentionDays: settings.recordingRetentionDays ?? null,
      maxRecordingDurationS: settings.maxRecordingDurationS ?? null,
    };
  }

  /**
   * Refuses a recording start while the app holds at least its cap. Concurrent starts need no lock:
   * none of them adds bytes before it completes, so each reads the same total and the rule ("refused
   * once the app holds its cap") holds for all; what they record together may end above the cap.
   * Like every quota refusal it carries no Retry-After: only the app (deleting) or retention frees it.
   */
  async requireRoomToRecord(appId: string, app: StorageColumns): Promise<void> {
    const limitMb = this.settings(app).maxStorageMb;
    if (limitMb === undefined) return;
    const refusal = storageRefusal(await this.storage.bytesHeld(appId), limitMb);
    if (!refusal) return;
    const { code, resource, limit, used, requested } = refusal;
    throw new LimitRefusedError(code, { resource, limit, used, requested });
  }
}
