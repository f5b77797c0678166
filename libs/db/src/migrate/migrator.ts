import { join } from 'node:path';
import internals, { type SchemaContext } from '@prisma/internals';
import { type PgConnection, parseDatabaseUrl, withDatabase } from './connection.js';
import { createTemporaryDatabase, dropDatabase, ensureDatabaseExists } from './databases.js';
import { type EngineSession, openEngineSession } from './engine-session.js';
import { readMigrationsList } from './migrations-list.js';
import { DEFAULT_MIGRATIONS_DIR, DEFAULT_SCHEMA_PATH } from './paths.js';

const { loadSchemaContext, createSchemaPathInput, toSchemasContainer } = internals;

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
    private readonly connection: PgConnection,
    private readonly schemaContext: SchemaContext,
    private readonly migrationsDir: string,
    private readonly session: EngineSession,
  ) {}

  static async open(options: MigratorOptions): Promise<Migrator> {
    const connection = parseDatabaseUrl(options.databaseUrl);
    const migrationsDir = options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR;
    const schemaContext = await loadSchemaContext({
      schemaPath: createSchemaPathInput({ schemaPathFromArgs: options.schemaPath ?? DEFAULT_SCHEMA_PATH, baseDir: process.cwd() }),
      printLoadMessage: false,
    });
    await ensureDatabaseExists(connection);
    const session = await openEngineSession(connection, schemaContext, migrationsDir);
    return new Migrator(connection, schemaContext, migrationsDir, session);
  }

  /** Applies pending migrations; returns the names applied (none when up to date). */
  async deploy(): Promise<string[]> {
    const { appliedMigrationNames } = await this.session.migrate.applyMigrations();
    return appliedMigrationNames;
  }

  /**
   * Writes a migration for the difference between what the migrations produce and the schema.
   * Returns its folder, or undefined when there is no difference and `allowEmpty` is not set.
   * Applies nothing to this database.
   *
   * The wasm engine's createMigration cannot open a shadow database itself; it reuses the schema
   * that diagnoseMigrationHistory computed (on a shadow database) for the migrations applied to
   * its main database. So it runs on a scratch database holding every migration, which also keeps
   * the result independent of this database's state.
   */
  async createMigration(name: string, { allowEmpty = false } = {}): Promise<string | undefined> {
    const scratchName = await createTemporaryDatabase(this.connection);
    try {
      const scratch = await openEngineSession(withDatabase(this.connection, scratchName), this.schemaContext, this.migrationsDir);
      try {
        await scratch.migrate.applyMigrations();
        await scratch.migrate.diagnoseMigrationHistory({ optInToShadowDatabase: true });
        const { generatedMigrationName } = await scratch.migrate.createMigration({
          migrationName: toMigrationName(name),
          draft: allowEmpty,
          schema: scratch.migrate.getPrismaSchema(),
        });
        return generatedMigrationName === undefined ? undefined : join(this.migrationsDir, generatedMigrationName);
      } finally {
        await scratch.close();
      }
    } finally {
      await dropDatabase(this.connection, scratchName);
    }
  }

  async status(): Promise<MigrationStatus> {
    const [{ migrations }, diagnosis] = await Promise.all([
      this.session.migrate.listMigrationDirectories(),
      this.session.migrate.diagnoseMigrationHistory({ optInToShadowDatabase: false }),
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

  /** Compares what the migrations produce (replayed on a temporary database) with the schema. */
  async check(): Promise<DriftReport> {
    const migrations = await readMigrationsList(this.migrationsDir);
    const { exitCode, stdout } = await this.session.raw.diff({
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
    await this.session.close();
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
