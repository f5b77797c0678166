import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile, appendFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Migrator } from './migrator.js';
import { DEFAULT_MIGRATIONS_DIR, DEFAULT_SCHEMA_PATH } from './paths.js';

const ADDED_MODEL = `
model StreamTag {
  id       String @id
  streamId String
  label    String

  @@index([streamId])
}
`;

describe(Migrator.name, () => {
  // The run's PostgreSQL server, started by libs/testing's global setup.
  const postgres = { url: inject('postgresUrl') };
  let sut: Migrator | undefined;
  const tempDirs: string[] = [];

  afterEach(async () => {
    await sut?.close();
    sut = undefined;
    await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const freshDatabaseUrl = (): string => {
    const url = new URL(postgres.url);
    url.pathname = `/migrate_${randomUUID().replaceAll('-', '')}`;
    return url.toString();
  };

  const query = async <T extends pg.QueryResultRow>(databaseUrl: string, sql: string): Promise<T[]> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return (await client.query<T>(sql)).rows;
    } finally {
      await client.end();
    }
  };

  const tableNames = async (databaseUrl: string): Promise<string[]> =>
    (
      await query<{ table_name: string }>(
        databaseUrl,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      )
    ).map((row) => row.table_name);

  /** A copy of prisma/schema.prisma and prisma/migrations that a test may change. */
  const copyOfProject = async (): Promise<{ schemaPath: string; migrationsDir: string }> => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-migrate-'));
    tempDirs.push(dir);
    const schemaPath = join(dir, 'schema.prisma');
    const migrationsDir = join(dir, 'migrations');
    await cp(DEFAULT_SCHEMA_PATH, schemaPath);
    await cp(DEFAULT_MIGRATIONS_DIR, migrationsDir, { recursive: true });
    return { schemaPath, migrationsDir };
  };

  const migrationFolders = async (migrationsDir: string): Promise<string[]> =>
    (await readdir(migrationsDir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);

  it('deploys the committed migrations to a fresh database, then finds nothing left to apply', async () => {
    const databaseUrl = freshDatabaseUrl();
    const committed = await migrationFolders(DEFAULT_MIGRATIONS_DIR);
    sut = await Migrator.open({ databaseUrl });

    expect(await sut.deploy()).toEqual(committed);
    expect(await sut.deploy()).toEqual([]);

    // One table per model of prisma/schema.prisma, plus Prisma's own bookkeeping.
    const models = [...(await readFile(DEFAULT_SCHEMA_PATH, 'utf8')).matchAll(/^model (\w+) \{/gm)].map((m) => m[1] ?? '');
    expect(models.length).toBeGreaterThanOrEqual(4);
    expect((await tableNames(databaseUrl)).sort()).toEqual([...models, '_prisma_migrations'].sort());
    const rows = await query<{ migration_name: string; applied_steps_count: number; finished: boolean }>(
      databaseUrl,
      'SELECT migration_name, applied_steps_count, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows).toEqual(committed.map((name) => ({ migration_name: name, applied_steps_count: 1, finished: true })));
    expect(await sut.status()).toMatchObject({ migrations: committed, pending: [], failed: [], edited: [] });
  });

  it('reports no drift between prisma/schema.prisma and the committed migrations', async () => {
    sut = await Migrator.open({ databaseUrl: freshDatabaseUrl() });

    expect(await sut.check()).toMatchObject({ drift: false });
  });

  it('detects a schema change and writes a migration for it, without touching the database, that then deploys', async () => {
    const databaseUrl = freshDatabaseUrl();
    const project = await copyOfProject();
    await appendFile(project.schemaPath, ADDED_MODEL);
    sut = await Migrator.open({ databaseUrl, ...project });

    const before = await sut.check();
    expect(before.drift).toBe(true);
    expect(before.summary).toContain('StreamTag');

    const folder = await sut.createMigration('Add stream tags');
    expect(folder).toMatch(/[/\\]\d{14}_add_stream_tags$/);
    const script = await readFile(join(folder ?? '', 'migration.sql'), 'utf8');
    expect(script).toContain('CREATE TABLE "StreamTag"');
    expect(await tableNames(databaseUrl)).toEqual([]);

    expect(await sut.deploy()).toHaveLength((await migrationFolders(DEFAULT_MIGRATIONS_DIR)).length + 1);
    expect(await tableNames(databaseUrl)).toContain('StreamTag');
    expect(await sut.check()).toMatchObject({ drift: false });
    expect(await sut.createMigration('nothing changed')).toBeUndefined();
  });

  it('deploys hand-written SQL with function bodies and CHECK constraints, and still checks clean', async () => {
    const databaseUrl = freshDatabaseUrl();
    const project = await copyOfProject();
    const handWritten = join(project.migrationsDir, '29990101000000_stream_guards');
    await mkdir(handWritten);
    await writeFile(
      join(handWritten, 'migration.sql'),
      `ALTER TABLE "Stream" ADD CONSTRAINT "Stream_publishers_check" CHECK ("publishers" >= 0);
CREATE FUNCTION stream_label(name text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN 'stream; ' || name;
END;
$$;
`,
    );
    sut = await Migrator.open({ databaseUrl, ...project });

    expect(await sut.deploy()).toContain('29990101000000_stream_guards');
    expect(await query<{ label: string }>(databaseUrl, "SELECT stream_label('a') AS label")).toEqual([{ label: 'stream; a' }]);
    // Replaying and describing a CHECK constraint reads catalog "char" columns.
    expect(await sut.check()).toMatchObject({ drift: false });
  });

  it('leaves no temporary databases and no sessions behind', async () => {
    const databaseUrl = freshDatabaseUrl();
    const project = await copyOfProject();
    await appendFile(project.schemaPath, ADDED_MODEL);
    sut = await Migrator.open({ databaseUrl, ...project });
    await sut.deploy();
    await sut.check();
    await sut.createMigration('add stream tags');
    await sut.close();
    sut = undefined;

    const databases = await query<{ datname: string }>(postgres.url, 'SELECT datname FROM pg_database');
    expect(databases.map((row) => row.datname).filter((name) => name.startsWith('tally_tmp_'))).toEqual([]);
    const database = new URL(databaseUrl).pathname.slice(1);
    await expect.poll(async () => query(postgres.url, `SELECT pid FROM pg_stat_activity WHERE datname = '${database}'`)).toEqual([]);
  });
});
