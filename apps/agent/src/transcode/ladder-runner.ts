import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LadderRun } from '@tally/contracts';
import { buildRenditionCommand, MASTER_PLAYLIST, masterPlaylist, planLadder, type Rendition } from '@tally/transcode';
import { containedPath } from './contained-path.js';
import type { Ffmpeg } from './ffmpeg.js';

/**
 * Makes one ladder: probes the source, encodes each rendition that does not upscale it (one
 * encoder at a time, the unit admission charged), writes the master playlist, and only then moves
 * the directory into place, so a ladder directory is never half written.
 */
export async function runLadder(run: LadderRun, recordingsDir: string, ffmpeg: Ffmpeg): Promise<Rendition[]> {
  // Both paths come from a queued job: they must stay inside the recordings directory, and only a
  // ladder directory is ever replaced.
  if (!run.ladderDir.endsWith('.ladder')) throw new Error(`ladderDir ${JSON.stringify(run.ladderDir)} is not a .ladder directory`);
  const source = await containedPath(recordingsDir, run.source, 'source');
  const final = await containedPath(recordingsDir, run.ladderDir, 'ladderDir', { followLast: false });
  const partial = await containedPath(recordingsDir, `${run.ladderDir}.partial`, 'ladderDir', { followLast: false });
  const info = await ffmpeg.probe(source);
  const renditions = planLadder(info);
  const support = await ffmpeg.support();
  if (run.encoder === 'nvenc' && !support.nvenc) throw new Error('this ffmpeg has no h264_nvenc encoder');

  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    for (const rendition of renditions) {
      await ffmpeg.run(buildRenditionCommand({ encoder: run.encoder, scaleCuda: support.scaleCuda, source, outDir: partial, rendition }));
    }
    await writeFile(join(partial, MASTER_PLAYLIST), masterPlaylist(renditions, info.hasAudio));
    await rm(final, { recursive: true, force: true });
    await rename(partial, final);
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
  return renditions;
}
