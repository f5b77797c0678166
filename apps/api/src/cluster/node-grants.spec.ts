import { describe, expect, it } from 'vitest';
import { nodeAclRules, nodeAclSetUser, originMediaAclRules, originMediaUserLine } from './node-grants.js';

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

  it('gives a node only its own queues (ladders, staging, reports), never the shared queues the worker consumes', () => {
    for (const role of ['media', 'worker', 'gpu'] as const) {
      const sut = nodeAclRules('n1', role);
      expect(sut).toContain('~bull:tally-node-report.n1:*');
      expect(sut.filter((rule) => rule.startsWith('~bull:'))).toEqual([
        '~bull:tally-transcode-node.n1:*',
        '~bull:tally-recording-node.n1:*',
        '~bull:tally-node-report.n1:*',
      ]);
    }
  });

  it("lets a node only add itself to the pool's index, never take others out of it", () => {
    for (const role of ['media', 'worker', 'gpu'] as const) {
      const sut = nodeAclRules('n1', role);
      expect(sut).toContain('(~tally:{nodes}:index +sadd)');
      expect(sut.filter((rule) => rule.includes('tally:{nodes}:index'))).toEqual(['(~tally:{nodes}:index +sadd)']);
    }
  });

  it("lets livekit-server (media) HGET one LiveKit key at a time; worker and GPU nodes' users nothing on the hash", () => {
    expect(nodeAclRules('n1', 'media').filter((rule) => rule.includes('tally:{lk}'))).toEqual(['(~tally:{lk}:keys +hget)']);
    expect(originMediaAclRules('n1')).toContain('(~tally:{lk}:keys +hget)');
    expect(nodeAclRules('n1', 'worker').some((rule) => rule.includes('tally:{lk}'))).toBe(false);
    expect(nodeAclRules('n1', 'gpu').some((rule) => rule.includes('tally:{lk}'))).toBe(false);
  });

  it('opens every channel only to livekit-server (media), and ingress channels only on worker nodes', () => {
    expect(nodeAclRules('n1', 'media')).toContain('&*');
    expect(nodeAclRules('n1', 'worker')).not.toContain('&*');
    expect(nodeAclRules('n1', 'worker')).toContain('&SRV.IngressInternal*');
    expect(nodeAclRules('n1', 'gpu')).not.toContain('&SRV.IngressInternal*');
  });

  it("gives a control node the origin's API and worker reach (every key, channel and ACL), without wiping or stopping the server", () => {
    const sut = nodeAclRules('cp2', 'control');
    expect(sut.slice(0, 5)).toEqual(['resetkeys', 'resetchannels', '~*', '&*', '+@all']);
    for (const command of ['flushall', 'flushdb', 'shutdown', 'debug', 'replicaof', 'failover', 'monitor'])
      expect(sut).toContain(`-${command}`);
    expect(sut.some((rule) => /^-(acl|client|eval|evalsha|script)/.test(rule))).toBe(false);
  });

  it('sets the password only as its SHA-256', () => {
    expect(nodeAclSetUser('n1', 'gpu', 'ab'.repeat(32)).slice(0, 4)).toEqual(['tally-node-n1', 'reset', 'on', `#${'ab'.repeat(32)}`]);
  });
});

describe(originMediaAclRules.name, () => {
  it("gives the origin's media processes a media node's grants under their own name, the password only as its SHA-256", () => {
    const sut = originMediaUserLine('origin-1', 'cd'.repeat(32));
    expect(sut.startsWith(`user tally-origin-media reset on #${'cd'.repeat(32)} resetkeys resetchannels -@all `)).toBe(true);
    expect(originMediaAclRules('origin-1').slice(2)).toEqual(nodeAclRules('origin-1', 'media').slice(2));
    expect(sut).not.toContain('~*');
    expect(sut).toContain('~bull:tally-node-report.origin-1:*');
  });
});
