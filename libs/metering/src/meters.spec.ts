import { describe, expect, it } from 'vitest';
import { eventTime, overlapSeconds, totalsOf } from './meters.js';

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
  it('takes the receive time within the event second, else the event second', () => {
    expect(eventTime(t('01:00:00'), t('01:00:00.420'))).toEqual(t('01:00:00.420'));
    expect(eventTime(t('01:00:00'), t('01:00:05.000'))).toEqual(t('01:00:00'));
    expect(eventTime(t('01:00:01'), t('01:00:00.900'))).toEqual(t('01:00:01'));
  });
});

describe('totalsOf', () => {
  it('puts each meter in its billing unit: minutes by role and mode, GB-hours of storage', () => {
    const totals = totalsOf([
      { meter: 'participant', dimension: 'publisher', quantity: 600 },
      { meter: 'participant', dimension: 'subscriber', quantity: 1200 },
      { meter: 'recording', dimension: 'passthrough', quantity: 300 },
      { meter: 'recording', dimension: 'room_composite', quantity: 60 },
      { meter: 'ingress', dimension: 'transcoded', quantity: 120 },
      { meter: 'storage', dimension: '', quantity: 2e9 * 1800 },
      { meter: 'unknown', dimension: '', quantity: 99 },
    ]);
    expect(totals).toMatchObject({
      participantMinutes: 30,
      publisherMinutes: 10,
      subscriberMinutes: 20,
      recordingMinutes: { passthrough: 5, room_composite: 1, track: 0, track_composite: 0 },
      ingressMinutes: { transcoded: 2, forwarded: 0 },
      storageGbHours: 1,
    });
  });
});
