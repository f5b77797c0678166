import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MigrationDirectory, MigrationList } from '@prisma/schema-engine-wasm/schema_engine_bg';

const LOCKFILE = 'migration_lock.toml';
const SCRIPT = 'migration.sql';

/**
 * The migrations folder in the engine's input shape, read the way `Migrate` reads it (it keeps its
 * own reader internal). Needed to diff "what the migrations produce" against the schema.
 */
export const readMigrationsList = async (migrationsDir: string): Promise<MigrationList> => {
  const lockfileContent = await readFile(join(migrationsDir, LOCKFILE), 'utf8').catch(() => null);
  const entries = await readdir(migrationsDir, { withFileTypes: true }).catch(() => []);
  const directories = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  directories.sort((a, b) => a.localeCompare(b));
  const migrationDirectories = await Promise.all(
    directories.map(async (name): Promise<MigrationDirectory> => ({
      path: name,
      migrationFile: {
        path: SCRIPT,
        content: await readFile(join(migrationsDir, name, SCRIPT), 'utf8').then(
          (value) => ({ tag: 'ok', value }),
          (error: Error) => ({ tag: 'error', value: error.message }),
        ),
      },
    })),
  );
  return {
    baseDir: migrationsDir,
    lockfile: { path: LOCKFILE, content: lockfileContent },
    shadowDbInitScript: '',
    migrationDirectories,
  };
};
