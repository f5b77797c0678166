import { open } from 'node:fs/promises';

export type FragmentTrim = Readonly<{ fragmented: boolean; wholeFragments: number; trimmedBytes: number }>;

/**
 * Cuts a fragmented MP4 cut short (its egress killed mid-write) back to its last whole fragment:
 * the top-level boxes are walked by their sizes, and a `moof` whose `mdat` did not reach the disk in
 * full is dropped with it, since ffmpeg would otherwise copy a truncated frame into the joined file.
 * A complete file, or an MP4 that is not fragmented (no `moof`: without its index at the end nothing
 * can read it anyway), is left as it is.
 *
 * @returns whether the file is fragmented, how many whole fragments it keeps, and the bytes removed
 */
export async function trimToLastFragment(path: string): Promise<FragmentTrim> {
  const file = await open(path, 'r+');
  try {
    const size = (await file.stat()).size;
    const header = Buffer.alloc(16);
    let offset = 0;
    let wholeUpTo = 0;
    let fragments = 0;
    let wholeFragments = 0;
    while (offset + 8 <= size) {
      await file.read(header, 0, 16, offset);
      const type = header.toString('latin1', 4, 8);
      const short = header.readUInt32BE(0);
      const headerBytes = short === 1 ? 16 : 8;
      const boxBytes = short === 1 ? Number(header.readBigUInt64BE(8)) : short === 0 ? size - offset : short;
      if (boxBytes < headerBytes || offset + boxBytes > size) break;
      if (type === 'moof') fragments += 1;
      // A fragment is whole once its media data is: the `moof` alone does not move the mark.
      else wholeUpTo = offset + boxBytes;
      if (type === 'mdat' && fragments > wholeFragments) wholeFragments = fragments;
      offset += boxBytes;
    }
    const fragmented = fragments > 0;
    if (!fragmented || wholeUpTo >= size) return { fragmented, wholeFragments, trimmedBytes: 0 };
    await file.truncate(wholeUpTo);
    return { fragmented, wholeFragments, trimmedBytes: size - wholeUpTo };
  } finally {
    await file.close();
  }
}
