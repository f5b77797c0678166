import { describe, expect, it } from 'vitest';
import { sentinelAddresses, sentinelsInAnswer } from './sentinel-addresses.js';

describe(sentinelAddresses.name, () => {
  it('keeps the configured Sentinels first and adds each discovered one once', () => {
    const sut = sentinelAddresses(['10.0.0.5:26379'], ['10.0.0.6:26379', '10.0.0.5:26379', '10.0.0.7:26379', '10.0.0.6:26379']);
    expect(sut).toEqual(['10.0.0.5:26379', '10.0.0.6:26379', '10.0.0.7:26379']);
  });
});

describe(sentinelsInAnswer.name, () => {
  it('reads ip and port of each Sentinel and skips what is not one', () => {
    const answer = [
      ['name', 'a1', 'ip', '10.0.0.6', 'port', '26379', 'flags', 'sentinel'],
      ['name', 'a2', 'ip', 'fd00::7', 'port', '26380'],
      ['name', 'broken', 'ip', '10.0.0.8', 'port', 'x'],
      'not an entry',
    ];
    expect(sentinelsInAnswer(answer)).toEqual(['10.0.0.6:26379', '[fd00::7]:26380']);
    expect(sentinelsInAnswer(null)).toEqual([]);
  });
});
