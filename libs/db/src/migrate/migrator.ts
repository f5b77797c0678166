import { join } from 'node:path';
import internals, { type SchemaContext } from '@prisma/internals';
import pm, { type Migrate as MigrateInstance } from '@prisma/migrate';
import { parseDatabaseUrl } from './connection.js';
import { ensureDatabaseExists } from './databases.js';
import { MigrationAdapterFactory } from './migration-adapter-factory.js';
import { readMigrationsList } from './migrations-list.js';
import { DEFAULT_MIGRATIONS_DIR, DEFAULT_SCHEMA_PATH } from './paths.js';
import { loadSchemaEngine, type RawSchemaEngine, type SchemaEngine } from './schema-engine.js';

const { Migrate } = pm;
const { loadSchemaContext, createSchemaPathInput, toSchemasContainer } = internals;

// TypeScript-private constructor; the public `setup` always spawns the native engine binary.
const MigrateConstructor = Migrate as unknown as new (options: {
  engine: SchemaEngine;
  schemaContext: SchemaContext;
  migrationsDirPath: string;
}) => MigrateInstance;

const NO_FILTER = { externalTables: [], externalEnums: [] };
const DIFF_NOT_EMPTY = 2;

export type MigratorOptions = {
  /** postgresql://user[:password]@host[:port]/database; the database is created if missing. */
  databaseUrl: string;
  schemaPath?: string;
  migrationsDir?: string;
};

export type MigrationStatus = {
  /** Every migration folder, in order. */
  migrations: string[];
  /** In the folder, not yet applied to the database. */
  pending: string[];
  /** Applied to the database but missing from the folder. */
  unknownToFolder: string[];
  failed: string[];
  /** Changed after they were applied (checksum mismatch). */
  edited: string[];
};

export type DriftReport = { drift: boolean; summary: string };

/**
 * Prisma Migrate on the wasm schema engine and adapter-pg, for hosts without the native engine.
 * Writes the same migration folders, lockfile and `_prisma_migrations` rows as the Prisma CLI.
 */
export class Migrator {
  private constructor(
    private readonly migrate: MigrateInstance,
    private readonly raw: RawSchemaEngine,
    private readonly schemaContext: SchemaContext,
    private readonly migrationsDir: string,
    private readonly adapterFactory: MigrationAdapterFactory,
  ) {}

  static async open(options: MigratorOptions): Promise<Migrator> {
    const connection = parseDatabaseUrl(options.databaseUrl);
    const migrationsDir = options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR;
    const schemaContext = await loadSchemaContext({
      schemaPath: createSchemaPathInput({ schemaPathFromArgs: options.schemaPath ?? DEFAULT_SCHEMA_PATH, baseDir: process.cwd() }),
      printLoadMessage: false,
    });
    await ensureDatabaseExists(connection);
    const adapterFactory = new MigrationAdapterFactory(connection);
    const { engine, raw } = await loadSchemaEngine(schemaContext.schemaFiles, adapterFactory);
    const migrate = new MigrateConstructor({ engine, schemaContext, migrationsDirPath: migrationsDir });
    return new Migrator(migrate, raw, schemaContext, migrationsDir, adapterFactory);
  }

  /** Applies pending migrations; returns the names applied (none when up to date). */
  async deploy(): Promise<string[]> {
    const { appliedMigrationNames } = await this.migrate.applyMigrations();
    return appliedMigrationNames;
  }

  /**
   * Writes a migration from the difference between the migrations (replayed on a temporary
   * database) and the schema. Returns its folder, or undefined when there is no difference and
   * `allowEmpty` is not set. Does not apply it.
   */
  async createMigration(name: string, { allowEmpty = false } = {}): Promise<string | undefined> {
    await this.migrate.diagnoseMigrationHistory({ optInToShadowDatabase: true });
    const { generatedMigrationName } = await this.migrate.createMigration({
      migrationName: toMigrationName(name),
      draft: allowEmpty,
      schema: this.migrate.getPrismaSchema(),
    });
    return generatedMigrationName === undefined ? undefined : join(this.migrationsDir, generatedMigrationName);
  }

  async status(): Promise<MigrationStatus> {
    const [{ migrations }, diagnosis] = await Promise.all([
      this.migrate.listMigrationDirectories(),
      this.migrate.diagnoseMigrationHistory({ optInToShadowDatabase: false }),
    ]);
    const history = diagnosis.history;
    return {
      migrations,
      pending: history !== null && history.diagnostic !== 'migrationsDirectoryIsBehind' ? history.unappliedMigrationNames : [],
      unknownToFolder: history !== null && history.diagnostic !== 'databaseIsBehind' ? history.unpersistedMigrationNames : [],
      failed: diagnosis.failedMigrationNames,
      edited: diagnosis.editedMigrationNames,
    };
  }

  /** Compares what the migrations produce (on a temporary database) with the schema. */
  async check(): Promise<DriftReport> {
    const migrations = await readMigrationsList(this.migrationsDir);
    const { exitCode, stdout } = await this.raw.diff({
      // Without any migration there is no lockfile, which the engine needs to replay a folder.
      from: migrations.migrationDirectories.length === 0 ? { tag: 'empty' } : { tag: 'migrations', ...migrations },
      to: { tag: 'schemaDatamodel', ...toSchemasContainer(this.schemaContext.schemaFiles) },
      script: false,
      exitCode: true,
      filters: NO_FILTER,
    });
    return { drift: exitCode === DIFF_NOT_EMPTY, summary: (stdout ?? '').trim() };
  }

  async close(): Promise<void> {
    await this.migrate.stop();
    await this.adapterFactory.close();
  }
}

export const isUpToDate = (status: MigrationStatus): boolean =>
  status.pending.length === 0 && status.unknownToFolder.length === 0 && status.failed.length === 0 && status.edited.length === 0;

/** Folder-safe, as the Prisma CLI does it: `Add stream tags` → `add_stream_tags`. */
const toMigrationName = (name: string): string => {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (slug === '') throw new Error(`Migration name "${name}" has no letters or digits`);
  return slug.slice(0, 200);
};
