import { Global, Module } from '@nestjs/common';
import { AppStorage } from '../apps/app-storage.js';
import { AppsRepository } from '../apps/apps.repository.js';
import { StorageRepository } from '../apps/storage.repository.js';
import { LiveApps } from '../apps/live-apps.js';
import { AuthFailureGate } from '../auth/auth-failure-gate.js';
import { ApiKeyCache } from '../auth/key-cache.js';
import { KeyUsageRecorder } from '../auth/key-usage.js';
import { PrincipalResolver } from '../auth/principal-resolver.js';
import { KeysRepository } from '../keys/keys.repository.js';

const providers = [
  AppsRepository,
  StorageRepository,
  AppStorage,
  LiveApps,
  KeysRepository,
  ApiKeyCache,
  AuthFailureGate,
  KeyUsageRecorder,
  PrincipalResolver,
];

/** The app and key records every feature (and the auth guard) looks up, and their in-process caches. */
@Global()
@Module({ providers, exports: providers })
export class TenancyModule {}
