export type PgConnection = {
  host: string;
  port: number;
  user: string;
  password: string | undefined;
  database: string;
};

/**
 * Explicit fields rather than a `connectionString`: pg lets `connectionString` win over `database`,
 * so a pool meant for another database (the shadow one) would silently reach the main database.
 */
export const parseDatabaseUrl = (databaseUrl: string): PgConnection => {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    throw new Error('DATABASE_URL is not a valid URL (expected postgresql://user[:password]@host[:port]/database)');
  }
  if (url.protocol !== 'postgresql:' && url.protocol !== 'postgres:') {
    throw new Error(`DATABASE_URL must use the postgresql:// scheme, got ${url.protocol}//`);
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database === '') throw new Error('DATABASE_URL names no database (postgresql://user@host:port/database)');
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port === '' ? 5432 : Number(url.port),
    user: decodeURIComponent(url.username) || 'postgres',
    password: url.password === '' ? undefined : decodeURIComponent(url.password),
    database,
  };
};

export const readDatabaseUrl = (env: NodeJS.ProcessEnv = process.env): string => {
  const value = env['DATABASE_URL'];
  if (value === undefined || value === '') {
    throw new Error('DATABASE_URL is not set (expected postgresql://user@host:port/database)');
  }
  return value;
};

export const withDatabase = (connection: PgConnection, database: string): PgConnection => ({
  ...connection,
  database,
});
