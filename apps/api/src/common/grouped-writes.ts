type Waiting<Row> = { row: Row; resolve: () => void; reject: (error: unknown) => void };

export type GroupedWritesOptions<Row> = Readonly<{
  /** Writes every row in one statement (one round trip, one commit); throws if any row cannot be written. */
  writeMany: (rows: readonly Row[]) => Promise<void>;
  /** Writes one row alone: how the rows of a group that failed are retried, so only a bad row fails its caller. */
  writeOne: (row: Row) => Promise<void>;
  /** Rows per statement at most. */
  maxRows: number;
}>;

/**
 * Group commit for one kind of row: a write asked for while another group is being written joins
 * the next group, written as one statement. A lone write goes out at once (nothing waits for a
 * timer); under load, N concurrent writers share one round trip and one commit instead of paying
 * one each. Every caller is answered only once its own row is committed.
 */
export class GroupedWrites<Row> {
  private queue: Waiting<Row>[] = [];
  private writing = false;

  constructor(private readonly options: GroupedWritesOptions<Row>) {}

  write(row: Row): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, this.options.maxRows);
        await this.writeGroup(group);
      }
    } finally {
      this.writing = false;
    }
  }

  private async writeGroup(group: readonly Waiting<Row>[]): Promise<void> {
    if (group.length > 1) {
      try {
        await this.options.writeMany(group.map((w) => w.row));
        for (const w of group) w.resolve();
        return;
      } catch {
        // One row may have sunk the statement (its app deleted meanwhile, say): each is tried alone.
      }
    }
    await Promise.all(
      group.map((w) =>
        this.options.writeOne(w.row).then(
          () => w.resolve(),
          (error: unknown) => w.reject(error),
        ),
      ),
    );
  }
}
