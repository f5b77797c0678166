import { Inject, Injectable } from '@nestjs/common';
import { Admitter, parseStoredLimits } from '@tally/admission';
import { CONFIG, type Config } from '@tally/config';
import {
  ADMIN_ONLY_APP_FIELDS,
  type AppView,
  type CreateAppBody,
  mergeRateLimits,
  parseStoredRateLimits,
  type QuotaOverrides,
  type UpdateAppBody,
} from '@tally/contracts';
import type { AppLimits } from '@tally/capacity';
import type { App } from '@tally/db';
import { AddressPolicy, WebhookResolver } from '@tally/webhooks';
import type { Principal } from '../tenancy/principal.js';
import { newId } from '../common/ids.js';
import { DomainError, NotFoundError } from '../common/domain-error.js';
import { CacheInvalidation } from '@tally/runtime';
import { CamerasService } from '../cameras/cameras.service.js';
import { ReconcileQueue } from '../capacity/reconcile.queue.js';
import { Clock } from '../common/clock.js';
import { StreamsService } from '../streams/streams.service.js';
import { mergeOverrides, quotaFieldOf, toFullView, toOverridesView, toQuotaView } from '../tenancy/app-limits.js';
import { AppStorage } from '../tenancy/app-storage.js';
import { type AppChanges, AppsRepository, type StorageChanges } from '../tenancy/apps.repository.js';

@Injectable()
export class AppsService {
  constructor(
    private readonly apps: AppsRepository,
    private readonly admitter: Admitter,
    private readonly streams: StreamsService,
    private readonly webhookAddresses: AddressPolicy,
    private readonly webhookHosts: WebhookResolver,
    private readonly invalidation: CacheInvalidation,
    private readonly cameras: CamerasService,
    private readonly sweeps: ReconcileQueue,
    private readonly clock: Clock,
    private readonly storage: AppStorage,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async create(body: CreateAppBody): Promise<AppView> {
    const app = await this.apps.create(newId('app'), body.name, storageChanges(body));
    await this.admitter.syncPolicy(app.id);
    return this.toView(app);
  }

  async list(): Promise<AppView[]> {
    const limits = await this.admitter.limitsForAll();
    return Promise.all((await this.apps.list()).map((app) => this.toView(app, limits[app.id])));
  }

  async get(appId: string): Promise<AppView> {
    return this.toView(await this.require(appId));
  }

  /** The admin changes anything; an app's own key only its webhook URL and recording settings. */
  async update(appId: string, body: UpdateAppBody, by: Principal): Promise<AppView> {
    if (by.kind === 'app') {
      const denied = ADMIN_ONLY_APP_FIELDS.filter((field) => body[field] !== undefined);
      if (denied.length > 0) {
        throw new DomainError('forbidden', `only the admin key may change ${denied.join(', ')}`, { fields: denied });
      }
    }
    const current = await this.require(appId);
    const changes: AppChanges = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.quotas !== undefined) changes.limits = mergeOverrides(parseStoredLimits(current.limits), body.quotas);
    if (body.rateLimits !== undefined) changes.rateLimits = mergeRateLimits(parseStoredRateLimits(current.rateLimits), body.rateLimits);
    if (body.webhookUrl !== undefined && body.webhookUrl !== null) await this.requireReachableWebhookUrl(body.webhookUrl, appId);
    if (body.webhookUrl !== undefined && body.webhookUrl !== current.webhookUrl) {
      Object.assign(changes, {
        webhookUrl: body.webhookUrl,
        webhookDisabledAt: null,
        webhookDisabledReason: null,
        webhookFailingSince: null,
      });
    }
    if (body.recordingMode !== undefined) changes.recordingMode = body.recordingMode;
    if (body.recordingFallback !== undefined) changes.recordingFallback = body.recordingFallback;
    if (body.recordingFormat !== undefined) changes.recordingFormat = body.recordingFormat;
    if (body.transcodeLadder !== undefined) changes.transcodeLadder = body.transcodeLadder;
    if (body.publicCameras !== undefined) changes.publicCameras = body.publicCameras;
    Object.assign(changes, storageChanges(body));
    const app =
      body.guarantees === undefined
        ? await this.apps.update(appId, changes)
        : await this.updateGuarantees(current, changes, body.guarantees);
    if (!app) throw new NotFoundError('app');
    await this.admitter.syncPolicy(appId);
    // Every replica's admission and rate limiter drop their copy of the app's policy and read the new one.
    await this.invalidation.publish({ kind: 'policy', appId });
    return this.toView(app);
  }

  /** Guarantees partition the pool: the new ones must fit beside every other app's, or nothing changes (409). */
  private async updateGuarantees(current: App, changes: AppChanges, overrides: QuotaOverrides): Promise<App | null> {
    const guarantees = mergeOverrides(parseStoredLimits(current.guarantees), overrides);
    const fit = await this.admitter.guaranteeFit();
    return this.apps.updateGuarded(current.id, { ...changes, guarantees }, (others) => {
      const verdict = fit(others, guarantees);
      if (verdict.ok) return;
      const field = quotaFieldOf(verdict.cls);
      throw new DomainError(
        'conflict',
        `guarantees.${field} does not fit the pool: ${verdict.room} left beside the other guarantees, ${verdict.requested} requested`,
        {
          field: `guarantees.${field}`,
          quota: field,
          requested: verdict.requested,
          room: verdict.room,
        },
      );
    });
  }

  /**
   * The app is gone for every route at once (keys revoked, webhooks stopped); its streams end and its
   * cameras disconnect here, and a sweep is queued in which the worker stops everything else it runs
   * (recordings, HLS, ingresses, ladders) and releases every reservation it holds (AppTeardown).
   */
  async delete(appId: string): Promise<void> {
    await this.require(appId);
    if (!(await this.apps.markDeleted(appId, this.clock.now()))) throw new NotFoundError('app');
    await this.streams.endAll(appId, 'app_deleted');
    await this.cameras.deleteAll(appId);
    await this.admitter.syncPolicy(appId);
    await this.invalidation.publish({ kind: 'app', appId });
    await this.sweeps.requestSweep();
  }

  /** No webhook may point into the origin's own networks (SSRF); delivery checks again after DNS. */
  private async requireReachableWebhookUrl(url: string, appId: string): Promise<void> {
    const refusal = await this.webhookAddresses.refusal(url, async (host) =>
      (await this.webhookHosts.resolve(host, appId)).map((a) => a.address),
    );
    if (refusal === undefined) return;
    throw new DomainError('validation_failed', `invalid request: webhookUrl: ${refusal}`, {
      fields: [{ field: 'webhookUrl', message: refusal }],
    });
  }

  private async require(appId: string): Promise<App> {
    const app = await this.apps.find(appId);
    if (!app) throw new NotFoundError('app');
    return app;
  }

  private rateLimitsView(app: App): AppView['rateLimits'] {
    const explicit = parseStoredRateLimits(app.rateLimits);
    return {
      requestsPerMinute: explicit.requestsPerMinute ?? this.config.rateLimit.requestsPerMinute,
      startsPerMinute: explicit.startsPerMinute ?? this.config.rateLimit.startsPerMinute,
      explicit,
    };
  }

  private async toView(app: App, limits?: AppLimits): Promise<AppView> {
    return {
      id: app.id,
      name: app.name,
      createdAt: app.createdAt.toISOString(),
      quotas: toQuotaView(limits ?? (await this.admitter.limitsFor(app.id))),
      explicitQuotas: toOverridesView(parseStoredLimits(app.limits)),
      guarantees: toFullView(parseStoredLimits(app.guarantees)),
      rateLimits: this.rateLimitsView(app),
      usage: { streams: (await this.admitter.appUsage(app.id))['streams'] ?? 0 },
      webhookUrl: app.webhookUrl,
      webhookSecretSet: app.webhookSecret !== null,
      recordingMode: app.recordingMode,
      recordingFallback: app.recordingFallback,
      recordingFormat: app.recordingFormat,
      transcodeLadder: app.transcodeLadder,
      publicCameras: app.publicCameras,
      ...this.storageView(app),
    };
  }

  private storageView(app: App): Pick<AppView, StorageField | 'explicitStorage'> {
    const settings = this.storage.settings(app);
    return {
      maxStorageMb: settings.maxStorageMb ?? null,
      recordingRetentionDays: settings.recordingRetentionDays ?? null,
      maxRecordingDurationS: settings.maxRecordingDurationS ?? null,
      explicitStorage: Object.fromEntries(STORAGE_FIELDS.flatMap((f) => (app[f] === null ? [] : [[f, app[f]]]))),
    };
  }
}

const STORAGE_FIELDS = ['maxStorageMb', 'recordingRetentionDays', 'maxRecordingDurationS'] as const;
type StorageField = (typeof STORAGE_FIELDS)[number];

/** The storage settings a body sets (a number) or returns to the operator's default (null). */
function storageChanges(body: Partial<Record<StorageField, number | null>>): StorageChanges {
  return Object.fromEntries(STORAGE_FIELDS.flatMap((f) => (body[f] === undefined ? [] : [[f, body[f]]])));
}
