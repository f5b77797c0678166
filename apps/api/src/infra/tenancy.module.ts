import { Global, Module } from '@nestjs/common';
import { AppsRepository } from '../apps/apps.repository.js';
import { KeysRepository } from '../keys/keys.repository.js';

/** The app and key records every feature (and the auth guard) looks up. */
@Global()
@Module({ providers: [AppsRepository, KeysRepository], exports: [AppsRepository, KeysRepository] })
export class TenancyModule {}
