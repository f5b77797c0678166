import { Global, Module } from '@nestjs/common';
import { AppStorage } from './app-storage.js';
import { AppsRepository } from './apps.repository.js';
import { StorageRepository } from './storage.repository.js';
import { LiveApps } from './live-apps.js';
import { AuthFailureGate } from './auth-failure-gate.js';
import { ApiKeyCache } from './key-cache.js';
import { KeyUsageRecorder } from './key-usage.js';
import { PrincipalResolver } from './principal-resolver.js';
import { KeysRepository } from './keys.repository.js';

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
