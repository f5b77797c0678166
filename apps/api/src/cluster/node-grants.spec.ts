import { describe, expect, it } from 'vitest';
import { nodeAclRules, nodeAclSetUser } from './node-grants.js';

describe(nodeAclRules.name, () => {
  it('gives every role its own agent keys and nothing administrative', () => {
    for (const role of ['media', 'worker', 'gpu'] as const) {
      const sut = nodeAclRules('n1', role);
      expect(sut.slice(0, 3)).toEqual(['resetkeys', 'resetchannels', '-@all']);
      expect(sut).toEqual(expect.arrayContaining(['-@admin', '-@dangerous', '~tally:{nodes}:hb:n1', '&tally:{nodes}:wake:n1']));
      expect(sut.indexOf('-@dangerous')).toBeGreaterThan(sut.indexOf('+@write'));
      expect(sut.some((rule) => rule === '~*' || rule.startsWith('~tally:{cap}:pool') || rule.startsWith('~tally:join'))).toBe(false);
    }
  });

  it('opens every channel only to livekit-server (media), and ingress channels only on worker nodes', () => {
    expect(nodeAclRules('n1', 'media')).toContain('&*');
    expect(nodeAclRules('n1', 'worker')).not.toContain('&*');
    expect(nodeAclRules('n1', 'worker')).toContain('&SRV.IngressInternal*');
    expect(nodeAclRules('n1', 'gpu')).not.toContain('&SRV.IngressInternal*');
  });

  it('sets the password only as its SHA-256', () => {
    expect(nodeAclSetUser('n1', 'gpu', 'ab'.repeat(32)).slice(0, 4)).toEqual(['tally-node-n1', 'reset', 'on', `#${'ab'.repeat(32)}`]);
  });
});
