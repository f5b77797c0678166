import { CreateTokenBody } from '@tally/contracts';
import { describe, expect, it } from 'vitest';
import { DomainError } from './domain-error.js';
import { ZodPipe } from './zod.pipe.js';

describe(ZodPipe.name, () => {
  const sut = new ZodPipe(CreateTokenBody);

  it('returns the parsed value with defaults', () => {
    expect(sut.transform({ identity: 'host', role: 'viewer' })).toEqual({ identity: 'host', role: 'viewer', ttlSeconds: 3600 });
  });

  it('throws a validation error naming each bad field', () => {
    let caught: unknown;
    try {
      sut.transform({ identity: 'bad identity!', role: 'owner' });
    } catch (error) {
      caught = error;
    }

    expect(caught).toBeInstanceOf(DomainError);
    const error = caught as DomainError;
    expect(error.code).toBe('validation_failed');
    expect((error.details?.['fields'] as { field: string }[]).map((f) => f.field).sort()).toEqual(['identity', 'role']);
  });

  it('treats a missing body as an empty object', () => {
    expect(() => sut.transform(undefined)).toThrow(/identity/);
  });
});
