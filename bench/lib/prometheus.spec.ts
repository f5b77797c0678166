import { describe, expect, it } from 'vitest';
import { sumMetric } from './prometheus.js';

const exposition = `# HELP livekit_packet_total packets
# TYPE livekit_packet_total counter
livekit_packet_total{direction="incoming",kind="media",node_id="N1"} 1200
livekit_packet_total{direction="incoming",kind="rtcp",node_id="N1"} 30
livekit_packet_total{direction="outgoing",kind="media",node_id="N1"} 5e3
livekit_packet_total_extra{direction="incoming"} 99
livekit_bytes_total{direction="incoming"} 1048576
`;

describe(sumMetric.name, () => {
  it('adds the samples whose labels match, and only that metric', () => {
    expect(sumMetric(exposition, 'livekit_packet_total', { direction: 'incoming' })).toBe(1230);
    expect(sumMetric(exposition, 'livekit_packet_total', { direction: 'outgoing' })).toBe(5000);
    expect(sumMetric(exposition, 'livekit_packet_total')).toBe(6230);
  });

  it('reads 0 when the metric is absent', () => {
    expect(sumMetric(exposition, 'livekit_nack_total')).toBe(0);
  });
});
