import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { type PgConnection, withDatabase } from './connection.js';

const INVALID_CATALOG_NAME = '3D000';
// Always present on a PostgreSQL server; used to create the target database when it is missing.
const MAINTENANCE_DATABASE = 'postgres';

const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;

const withClient = async <T>(connection: PgConnection, fn: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client(connection);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};

/** Creates the target database when the server does not have it yet, like `prisma migrate deploy`. */
export const ensureDatabaseExists = async (connection: PgConnection): Promise<void> => {
  try {
    await withClient(connection, () => Promise.resolve());
  } catch (error) {
    if ((error as { code?: unknown }).code !== INVALID_CATALOG_NAME) throw error;
    await withClient(withDatabase(connection, MAINTENANCE_DATABASE), (client) =>
      client.query(`CREATE DATABASE ${quoteIdentifier(connection.database)}`),
    );
  }
};

/** Creates an empty, uniquely named database next to the one in `connection`; returns its name. */
export const createTemporaryDatabase = async (connection: PgConnection): Promise<string> => {
  const name = `tally_tmp_${randomUUID().replaceAll('-', '')}`;
  await withClient(connection, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(name)}`));
  return name;
};

/** FORCE ends connections still attached (e.g. an idle pool client), which would block a plain DROP. */
export const dropDatabase = async (connection: PgConnection, name: string): Promise<void> => {
  await withClient(connection, (client) => client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`));
};
