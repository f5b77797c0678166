import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Admitter } from '@tally/admission';

/**
 * Admission reads each app's caps and guarantees from the ledger's copy in Redis (one key per
 * admission). An app's copy is written whenever the app changes; at startup every copy is written
 * again (and the worker's sweep restores lost copies of guaranteed apps), so guarantees hold even
 * for apps that admit nothing after Redis restarted empty.
 */
@Injectable()
export class PolicySync implements OnApplicationBootstrap {
  private readonly logger = new Logger(PolicySync.name);

  constructor(private readonly admitter: Admitter) {}

  async onApplicationBootstrap(): Promise<void> {
    const apps = await this.admitter.syncAllPolicies();
    this.logger.log(`quota policies of ${apps} apps copied to the capacity ledger`);
  }
}
