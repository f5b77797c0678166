import type { TestProject } from 'vitest/node';
import { runMigrations } from '@tally/db';
import { createDatabase, TEMPLATE_DATABASE } from './database.js';
import { startPostgres } from './postgres.js';

declare module 'vitest' {
  // eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- module augmentation needs an interface
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

/** One PostgreSQL for the run, with a migrated template database each test file copies. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await startPostgres();
  const templateUrl = await createDatabase(postgres.url, TEMPLATE_DATABASE);
  await runMigrations(templateUrl);
  project.provide('postgresUrl', postgres.url);
  return () => postgres.stop();
}
