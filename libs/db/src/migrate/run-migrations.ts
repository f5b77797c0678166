/**
 * Applies pending migrations from prisma/migrations (like `prisma migrate deploy`), creating the
 * database if missing; returns the names applied. The migrate toolchain is loaded on first call
 * so that importing @tally/db stays light for the apps.
 */
export const runMigrations = async (databaseUrl: string): Promise<string[]> => {
  const { Migrator } = await import('./migrator.js');
  const migrator = await Migrator.open({ databaseUrl });
  try {
    return await migrator.deploy();
  } finally {
    await migrator.close();
  }
};
