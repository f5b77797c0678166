import { describe, expect, it } from 'vitest';
import { reservationOwner } from './reservation-owner.js';

describe(reservationOwner.name, () => {
  it('names the row each kind of reservation belongs to', () => {
    expect(reservationOwner('str_abc')).toEqual({ type: 'stream', id: 'str_abc' });
    expect(reservationOwner('rec_abc')).toEqual({ type: 'recording', id: 'rec_abc' });
    expect(reservationOwner('rec_abc.ladder')).toEqual({ type: 'ladder', id: 'rec_abc' });
    expect(reservationOwner('hls_abc')).toEqual({ type: 'hls', id: 'hls_abc' });
    expect(reservationOwner('ing_abc')).toEqual({ type: 'ingress', id: 'ing_abc' });
    expect(reservationOwner('cam_abc')).toEqual({ type: 'camera', id: 'cam_abc' });
    expect(reservationOwner('cvw_abc')).toEqual({ type: 'camera_viewer', id: 'cvw_abc' });
  });

  it('claims no owner for ids Tally never reserves under', () => {
    expect(reservationOwner('job-1')).toBeUndefined();
    expect(reservationOwner('str_abc.ladder')).toBeUndefined();
    expect(reservationOwner('app_abc')).toBeUndefined();
  });
});
