import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { KeysRepository } from './keys.repository.js';

/** How often the keys used since the last write get their lastUsedAt, in one statement. */
const FLUSH_INTERVAL_MS = 10_000;

/** Records key use in memory and writes lastUsedAt in batches, keeping authentication off the write path. */
@Injectable()
export class KeyUsageRecorder implements OnModuleInit, OnApplicationShutdown {
  private used = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly keys: KeysRepository,
    private readonly clock: Clock,
  ) {}

  record(keyId: string): void {
    this.used.add(keyId);
  }

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  async flush(): Promise<void> {
    if (this.used.size === 0) return;
    const ids = [...this.used];
    this.used = new Set();
    try {
      await this.keys.touchMany(ids, this.clock.now());
    } catch (error) {
      for (const id of ids) this.used.add(id);
      new Logger(KeyUsageRecorder.name).warn(`writing lastUsedAt of ${ids.length} keys failed, retrying later: ${String(error)}`);
    }
  }
}
