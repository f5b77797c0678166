import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { agentLogger } from './logger.js';

/** Collects what the logger writes; pino writes one JSON document per line. */
function lines() {
  const written: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { destination, records: () => written.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe(agentLogger.name, () => {
  it('writes each line as a JSON record with its level, time and message', () => {
    const out = lines();
    const sut = agentLogger('info', out.destination);

    sut.info('tally agent 1.0.0: node n1 heartbeating every 5 s');
    sut.error({ err: new Error('redis down') }, 'could not remove the heartbeat');

    const [info, error] = out.records();
    expect(info).toMatchObject({ level: 30, msg: 'tally agent 1.0.0: node n1 heartbeating every 5 s' });
    expect(typeof info?.time).toBe('number');
    expect(error).toMatchObject({ level: 50, msg: 'could not remove the heartbeat', err: { message: 'redis down' } });
  });

  it('drops lines below TALLY_LOG_LEVEL', () => {
    const out = lines();
    const sut = agentLogger('warn', out.destination);

    sut.info('ladder r1: ready');
    sut.warn('warning: no NVENC');

    expect(out.records().map((r) => r.msg)).toEqual(['warning: no NVENC']);
  });
});
