/** What a reservation is held for, as its id says (every reservation id is its owner's id, ladders `<recordingId>.ladder`). */
export type ReservationOwnerType = 'stream' | 'recording' | 'hls' | 'ladder' | 'ingress' | 'camera' | 'camera_viewer';

export type ReservationOwner = Readonly<{ type: ReservationOwnerType; id: string }>;

const BY_PREFIX: Readonly<Record<string, ReservationOwnerType>> = {
  str: 'stream',
  rec: 'recording',
  hls: 'hls',
  ing: 'ingress',
  cam: 'camera',
  cvw: 'camera_viewer',
};

const LADDER_SUFFIX = '.ladder';

/** The owner of reservation `id`; undefined for an id no Tally workload takes. */
export function reservationOwner(id: string): ReservationOwner | undefined {
  if (id.endsWith(LADDER_SUFFIX)) {
    const recordingId = id.slice(0, -LADDER_SUFFIX.length);
    return recordingId.startsWith('rec_') ? { type: 'ladder', id: recordingId } : undefined;
  }
  const type = BY_PREFIX[id.slice(0, id.indexOf('_'))];
  return type === undefined ? undefined : { type, id };
}
