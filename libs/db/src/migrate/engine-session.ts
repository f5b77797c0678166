import type { SchemaContext } from '@prisma/internals';
import pm, { type Migrate as MigrateInstance } from '@prisma/migrate';
import type { PgConnection } from './connection.js';
import { MigrationAdapterFactory } from './migration-adapter-factory.js';
import { loadSchemaEngine, type RawSchemaEngine, type SchemaEngine } from './schema-engine.js';

const { Migrate } = pm;

// TypeScript-private constructor; the public `setup` always spawns the native engine binary.
const MigrateConstructor = Migrate as unknown as new (options: {
  engine: SchemaEngine;
  schemaContext: SchemaContext;
  migrationsDirPath: string;
}) => MigrateInstance;

/** Prisma's `Migrate` on a wasm schema engine connected to one database. */
export type EngineSession = {
  migrate: MigrateInstance;
  /** The engine itself, for commands `Migrate` does not expose usefully (diff). */
  raw: RawSchemaEngine;
  close(): Promise<void>;
};

export const openEngineSession = async (
  connection: PgConnection,
  schemaContext: SchemaContext,
  migrationsDir: string,
): Promise<EngineSession> => {
  const adapterFactory = new MigrationAdapterFactory(connection);
  const { engine, raw } = await loadSchemaEngine(schemaContext.schemaFiles, adapterFactory);
  const migrate = new MigrateConstructor({ engine, schemaContext, migrationsDirPath: migrationsDir });
  return {
    migrate,
    raw,
    close: async () => {
      await migrate.stop();
      await adapterFactory.close();
    },
  };
};
