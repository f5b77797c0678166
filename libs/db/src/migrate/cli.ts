import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { readDatabaseUrl } from './connection.js';
import { isUpToDate, Migrator, type MigrationStatus } from './migrator.js';

const USAGE = `Usage: cli.ts <command> [options]   (connection from DATABASE_URL)

Commands:
  deploy                 apply pending migrations (no-op when up to date)
  create --name NAME     write a migration for the schema changes (not applied); --empty for hand-written SQL
  status                 list migrations; exit 1 unless the database is up to date
  check                  exit 1 if prisma/schema.prisma differs from what the migrations produce

Options:
  --schema PATH          default prisma/schema.prisma
  --migrations DIR       default prisma/migrations`;

type Command = 'deploy' | 'create' | 'status' | 'check';
const COMMANDS: readonly string[] = ['deploy', 'create', 'status', 'check'] satisfies Command[];

const main = async (argv: string[]): Promise<number> => {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      empty: { type: 'boolean', default: false },
      schema: { type: 'string' },
      migrations: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const command = positionals[0];
  if (values.help || command === undefined || !COMMANDS.includes(command) || positionals.length > 1) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  if (command === 'create' && values.name === undefined) {
    console.error('create needs --name NAME (e.g. --name add_stream_tags)');
    return 2;
  }

  const migrator = await Migrator.open({
    databaseUrl: readDatabaseUrl(),
    ...(values.schema === undefined ? {} : { schemaPath: values.schema }),
    ...(values.migrations === undefined ? {} : { migrationsDir: values.migrations }),
  });
  try {
    const schemaLabel = values.schema ?? 'prisma/schema.prisma';
    return await run(migrator, command as Command, { name: values.name ?? '', empty: values.empty, schemaLabel });
  } finally {
    await migrator.close();
  }
};

type RunOptions = { name: string; empty: boolean; schemaLabel: string };

const run = async (migrator: Migrator, command: Command, { name, empty, schemaLabel }: RunOptions): Promise<number> => {
  switch (command) {
    case 'deploy': {
      const applied = await migrator.deploy();
      console.log(applied.length === 0 ? 'No pending migrations.' : `Applied:\n${bullets(applied)}`);
      return 0;
    }
    case 'create': {
      const folder = await migrator.createMigration(name, { allowEmpty: empty });
      console.log(
        folder === undefined
          ? 'The schema matches the migrations; nothing to create (use --empty for a hand-written migration).'
          : `Created ${relative(process.cwd(), folder)}/migration.sql (not applied; run deploy).`,
      );
      return 0;
    }
    case 'status': {
      const status = await migrator.status();
      console.log(describeStatus(status));
      return isUpToDate(status) ? 0 : 1;
    }
    case 'check': {
      const report = await migrator.check();
      if (!report.drift) {
        console.log(`The migrations produce exactly ${schemaLabel}.`);
        return 0;
      }
      console.error(
        `${schemaLabel} differs from what the migrations produce:\n${report.summary}\n\n` +
          'Create a migration for it: npm run db:migrate:create -- --name <what_changed>',
      );
      return 1;
    }
  }
};

const bullets = (names: string[]): string => names.map((name) => `  - ${name}`).join('\n');

const describeStatus = (status: MigrationStatus): string => {
  const lines = [`${status.migrations.length} migration(s) in the folder.`];
  if (status.pending.length > 0) lines.push(`Not yet applied:\n${bullets(status.pending)}`);
  if (status.unknownToFolder.length > 0) lines.push(`Applied but missing from the folder:\n${bullets(status.unknownToFolder)}`);
  if (status.failed.length > 0) lines.push(`Failed:\n${bullets(status.failed)}`);
  if (status.edited.length > 0) lines.push(`Edited after being applied:\n${bullets(status.edited)}`);
  if (isUpToDate(status)) lines.push('The database is up to date.');
  return lines.join('\n');
};

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
