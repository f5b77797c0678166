import { describe, expect, it } from 'vitest';
import { PrimaryChanges } from './primary-changes.js';

describe(PrimaryChanges.name, () => {
  it('counts a connection that comes back on another server, not the first one nor a reconnect to the same', () => {
    const sut = new PrimaryChanges();
    expect(sut.seen('10.0.0.5:6379')).toBe(false);
    expect(sut.seen('10.0.0.5:6379')).toBe(false);
    expect(sut.seen('10.0.0.6:6379')).toBe(true);
    expect(sut.seen('10.0.0.6:6379')).toBe(false);
    expect(sut.seen('10.0.0.5:6379')).toBe(true);
  });
});
