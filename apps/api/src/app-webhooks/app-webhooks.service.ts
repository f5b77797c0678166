import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';
import type {
  RotateWebhookSecretBody,
  WebhookDeliveryListQuery,
  WebhookDeliveryView,
  WebhookEndpointView,
  WebhookSecretView,
} from '@tally/contracts';
import { newWebhookSecret, sealSecret } from '@tally/webhooks';
import { Clock } from '../common/clock.js';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { AppWebhooksRepository } from './app-webhooks.repository.js';
import { toDeliveryView, toEndpointView } from './delivery.view.js';
import { RedeliveryLimiter } from './redelivery-limiter.js';

@Injectable()
export class AppWebhooksService {
  constructor(
    private readonly repository: AppWebhooksRepository,
    private readonly clock: Clock,
    private readonly limiter: RedeliveryLimiter,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * A new signing secret, returned this once and stored sealed. Every attempt from now on is
   * signed with it, retries of earlier events included; for `gracePeriodS` the previous secret
   * signs too, so receivers can switch at their own pace.
   */
  async rotateSecret(appId: string, body: RotateWebhookSecretBody): Promise<WebhookSecretView> {
    const key = this.config.secretsKey;
    if (key === undefined) {
      throw new DomainError(
        'conflict',
        'webhook secrets need TALLY_SECRETS_KEY (64 hex characters, e.g. `openssl rand -hex 32`) on the API and worker',
      );
    }
    const secret = newWebhookSecret();
    const previousUntil = body.gracePeriodS > 0 ? new Date(this.clock.now().getTime() + body.gracePeriodS * 1000) : null;
    const rotated = await this.repository.rotateSecret(appId, sealSecret(key, secret, appId), previousUntil);
    if (rotated === undefined) throw new NotFoundError('app');
    return { secret, previousSecretExpiresAt: rotated.previousUntil?.toISOString() ?? null };
  }

  async endpoint(appId: string): Promise<WebhookEndpointView> {
    const row = await this.repository.endpoint(appId);
    if (!row) throw new NotFoundError('app');
    return toEndpointView(row, this.clock.now());
  }

  /** Deliveries are attempted again from now on; those that died while it was disabled can be redelivered. */
  async enableEndpoint(appId: string): Promise<WebhookEndpointView> {
    const row = await this.repository.enableEndpoint(appId);
    if (!row) throw new NotFoundError('app');
    return toEndpointView(row, this.clock.now());
  }

  async listDeliveries(appId: string, query: WebhookDeliveryListQuery): Promise<WebhookDeliveryView[]> {
    await this.requireApp(appId);
    return (await this.repository.listDeliveries(appId, query.status, query.limit)).map(toDeliveryView);
  }

  /** The same event (same id, same body) to the app's current URL, as a new delivery with its own attempts. */
  async redeliver(appId: string, deliveryId: string): Promise<WebhookDeliveryView> {
    const url = await this.requireApp(appId);
    const original = await this.repository.findDelivery(appId, deliveryId);
    if (!original) throw new NotFoundError('delivery');
    if (url === null) throw new DomainError('conflict', 'the app has no webhook URL: set webhookUrl first');
    await this.limiter.take(appId);
    return toDeliveryView(await this.repository.redeliver(appId, original.eventId, url));
  }

  private async requireApp(appId: string): Promise<string | null> {
    const app = await this.repository.webhookUrl(appId);
    if (!app) throw new NotFoundError('app');
    return app.webhookUrl;
  }
}
