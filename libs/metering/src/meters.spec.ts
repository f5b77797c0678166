import { describe, expect, it } from 'vitest';
import { eventTime, overlapSeconds, totalsOf } from './meters.js';
import { usageCloudEvents } from './usage-events.js';

const t = (iso: string): Date => new Date(`2026-11-01T${iso}Z`);

describe('overlapSeconds', () => {
  it('counts only the part of an interval inside the bucket, an open one up to now', () => {
    expect(overlapSeconds(t('00:50:00'), t('01:10:00'), t('01:00:00'), t('02:00:00'), t('03:00:00'))).toBe(600);
    expect(overlapSeconds(t('01:30:00'), null, t('01:00:00'), t('02:00:00'), t('01:45:00'))).toBe(900);
    expect(overlapSeconds(null, t('01:10:00'), t('01:00:00'), t('02:00:00'), t('03:00:00'))).toBe(0);
    expect(overlapSeconds(t('02:30:00'), null, t('01:00:00'), t('02:00:00'), t('03:00:00'))).toBe(0);
  });
});

describe('eventTime', () => {
  it('takes the receive time within the event second, else the middle of the event second', () => {
    expect(eventTime(t('01:00:00'), t('01:00:00.420'))).toEqual(t('01:00:00.420'));
    expect(eventTime(t('01:00:00'), t('01:00:01.200'))).toEqual(t('01:00:00.500'));
    expect(eventTime(t('01:00:00'), t('01:00:05.000'))).toEqual(t('01:00:00.500'));
    expect(eventTime(t('01:00:01'), t('01:00:00.900'))).toEqual(t('01:00:01'));
  });
});

describe('totalsOf', () => {
  it('puts each meter in its billing unit: minutes by role, mode and hardware, GB-hours of storage, bytes served', () => {
    const totals = totalsOf([
      { meter: 'participant', dimension: 'publisher', quantity: 600 },
      { meter: 'participant', dimension: 'subscriber', quantity: 1200 },
      { meter: 'recording', dimension: 'passthrough', quantity: 300 },
      { meter: 'recording', dimension: 'room_composite', quantity: 60 },
      { meter: 'ingress', dimension: 'transcoded', quantity: 120 },
      { meter: 'storage', dimension: '', quantity: 2e9 * 1800 },
      { meter: 'camera', dimension: '', quantity: 90 },
      { meter: 'camera_viewer', dimension: '', quantity: 180 },
      { meter: 'camera_viewer', dimension: '', quantity: 60 },
      { meter: 'ladder', dimension: 'gpu', quantity: 30 },
      { meter: 'ladder', dimension: 'cpu', quantity: 240 },
      { meter: 'hls_bytes', dimension: '', quantity: 1_234_567 },
      { meter: 'unknown', dimension: '', quantity: 99 },
    ]);
    expect(totals).toMatchObject({
      participantMinutes: 30,
      publisherMinutes: 10,
      subscriberMinutes: 20,
      recordingMinutes: { passthrough: 5, room_composite: 1, track: 0, track_composite: 0 },
      ingressMinutes: { transcoded: 2, forwarded: 0 },
      storageGbHours: 1,
      cameraMinutes: 1.5,
      cameraViewerMinutes: 4,
      ladderMinutes: { gpu: 0.5, cpu: 4 },
      hlsBytesServed: 1_234_567,
    });
  });
});

describe('usageCloudEvents', () => {
  it('names each meter tally.usage.<meter> with its unit, and the ladder hardware in the data', () => {
    const hour = new Date('2026-11-01T10:00:00Z');
    const events = usageCloudEvents(
      hour,
      [
        { appId: 'app_a', meter: 'camera', dimension: '', hour, quantity: 120 },
        { appId: 'app_a', meter: 'camera_viewer', dimension: '', hour, quantity: 30 },
        { appId: 'app_a', meter: 'ladder', dimension: 'gpu', hour, quantity: 90 },
        { appId: 'app_a', meter: 'hls_bytes', dimension: '', hour, quantity: 5000 },
      ],
      'https://tally.example/v1/metering',
    );
    expect(events.map((e) => [e.type, e.data.value, e.data.unit, e.data['hardware']])).toEqual([
      ['tally.usage.camera_minutes', 2, 'minutes', undefined],
      ['tally.usage.camera_viewer_minutes', 0.5, 'minutes', undefined],
      ['tally.usage.ladder_minutes', 1.5, 'minutes', 'gpu'],
      ['tally.usage.hls_bytes_served', 5000, 'bytes', undefined],
    ]);
  });
});
