import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { CatalogAwareClient, withCharColumns } from './catalog-char-columns.js';
import { type PgConnection, withDatabase } from './connection.js';
import { createTemporaryDatabase, dropDatabase } from './databases.js';

/**
 * The driver adapter factory the schema engine runs on: adapter-pg plus the fixes it needs for
 * migrations (catalog `"char"` columns, whole-script execution, a working shadow database).
 */
export class MigrationAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres';
  readonly adapterName = '@prisma/adapter-pg';
  private readonly open = new Set<SqlDriverAdapter>();

  constructor(private readonly connection: PgConnection) {}

  connect(): Promise<SqlDriverAdapter> {
    return this.connectTo(this.connection);
  }

  /**
   * adapter-pg's own version connects the "shadow" pool to the main database when configured with
   * a connection string, and drops the temporary database while its pool still holds it.
   */
  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const name = await createTemporaryDatabase(this.connection);
    const adapter = await this.connectTo(withDatabase(this.connection, name));
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await dispose();
      await dropDatabase(this.connection, name);
    };
    return adapter;
  }

  /** Releases adapters the engine did not dispose itself (it keeps the main one until freed). */
  async close(): Promise<void> {
    const adapters = [...this.open];
    await Promise.all(adapters.map((adapter) => adapter.dispose()));
  }

  private async connectTo(connection: PgConnection): Promise<SqlDriverAdapter> {
    // One connection, like the native engine: its session-level advisory lock and any SET must
    // stay on the connection that later statements use.
    const pool = { ...connection, max: 1, Client: CatalogAwareClient };
    const adapter = withCharColumns(await new PrismaPg(pool).connect());
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => withCharColumns(await startTransaction(isolationLevel));
    // Send a migration script as one simple-protocol query (no parameters), as the native engine
    // does: adapter-pg splits on every `;`, breaking function bodies and literals containing one.
    // Going through executeRaw keeps adapter-pg's error mapping.
    adapter.executeScript = async (script) => {
      await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
    };
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      if (!this.open.delete(adapter)) return;
      await dispose();
    };
    this.open.add(adapter);
    return adapter;
  }
}
