import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { EnvSchema } from './config.schema.js';

const valid = {
  TALLY_HOME: '/nonexistent',
  DATABASE_URL: 'postgresql://tally@127.0.0.1:5432/tally',
  REDIS_URL: 'redis://127.0.0.1:6379',
  LIVEKIT_URL: 'http://127.0.0.1:7880',
  LIVEKIT_PUBLIC_URL: 'ws://127.0.0.1:7880',
  LIVEKIT_API_KEY: 'tally',
  LIVEKIT_API_SECRET: 'x'.repeat(32),
};

describe(loadConfig.name, () => {
  it('applies defaults and freezes the result', () => {
    const sut = loadConfig(valid);

    expect(sut.http.port).toBe(8080);
    expect(sut.streams.joinTimeoutS).toBe(300);
    expect(sut.adminKey).toBeUndefined();
    expect(Object.isFrozen(sut) && Object.isFrozen(sut.livekit)).toBe(true);
  });

  it('names every invalid variable', () => {
    const attempt = () => loadConfig({ ...valid, REDIS_URL: 'http://nope', LIVEKIT_API_SECRET: 'short', TALLY_PORT: 'abc' });

    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/REDIS_URL[\s\S]*LIVEKIT_API_SECRET|LIVEKIT_API_SECRET[\s\S]*REDIS_URL/);
    expect(attempt).toThrow(/TALLY_PORT/);
  });

  it("takes the origin's TURN/TLS server for joined nodes only with both its host and its secret", () => {
    const secret = 'a'.repeat(48);

    expect(loadConfig(valid).cluster.turn).toBeUndefined();
    expect(loadConfig({ ...valid, TALLY_CLUSTER_TURN_HOST: 'media.example', TALLY_CLUSTER_TURN_SECRET: secret }).cluster.turn).toEqual({
      host: 'media.example',
      port: 5349,
      secret,
    });
    expect(() => loadConfig({ ...valid, TALLY_CLUSTER_TURN_HOST: 'media.example' })).toThrow(/TALLY_CLUSTER_TURN_SECRET/);
    expect(() => loadConfig({ ...valid, TALLY_CLUSTER_TURN_HOST: 'media example', TALLY_CLUSTER_TURN_SECRET: secret })).toThrow(
      /TALLY_CLUSTER_TURN_HOST/,
    );
  });

  it('refuses to start without a database', () => {
    const { DATABASE_URL: _omitted, ...rest } = valid;
    expect(() => loadConfig(rest)).toThrow(/DATABASE_URL/);
  });
});

describe('.env.example', () => {
  it('documents every variable the code reads', () => {
    const example = readFileSync(join(import.meta.dirname, '..', '..', '..', '.env.example'), 'utf8');
    const documented = new Set([...example.matchAll(/^([A-Z0-9_]+)=/gm)].map((m) => m[1]));

    expect(Object.keys(EnvSchema.shape).filter((name) => !documented.has(name))).toEqual([]);
  });
});
