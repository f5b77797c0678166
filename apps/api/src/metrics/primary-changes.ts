/**
 * Which Redis server this process's connection reached each time it became ready: a connection that
 * comes back to another address than before followed a failover (the Sentinels named another
 * primary). The first address is where it started, not a change; the same address again is a
 * reconnect (a restart of the same server, a network blip), not a failover.
 */
export class PrimaryChanges {
  private current: string | undefined;

  /** Records the address the connection is on now; true when it differs from the last one seen. */
  seen(address: string): boolean {
    const changed = this.current !== undefined && this.current !== address;
    this.current = address;
    return changed;
  }
}
