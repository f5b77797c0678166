import { execFile } from 'node:child_process';
import { rename, stat, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { RecordingEgress } from '@tally/db';
import { type JoinInput, joinArgs, planJoin, type RecordingFiles } from '@tally/recordings';
import { ffprobe } from './ffprobe.js';
import { trimToLastFragment } from './fragmented-mp4.js';

const run = promisify(execFile);

export type JoinOutcome = Readonly<{ ok: true; path: string }> | Readonly<{ ok: false; reason: string }>;

/**
 * The adapter that joins a passthrough recording's track files into one with ffmpeg (stream copy;
 * only Opus → AAC for an MP4 is encoded). WebM and OGG parts cut short by a killed egress are read
 * up to their last whole frame, a fragmented MP4 part is cut back to its last whole fragment; an MP4
 * part without its index (not fragmented) cannot be read and is named.
 */
export class PassthroughJoiner {
  constructor(private readonly files: RecordingFiles) {}

  async join(
    recording: Readonly<{ id: string; location: string; endedAt: Date | null }>,
    parts: readonly RecordingEgress[],
    keepOpusInMp4: boolean,
  ): Promise<JoinOutcome> {
    const inputs: JoinInput[] = [];
    const unreadable: string[] = [];
    for (const part of parts) {
      const path = this.files.incomingPath(part.location);
      const written = await isFile(path);
      // An egress that never started wrote nothing: the recording is what the other track holds.
      if (!part.startedAt && !written) continue;
      if (!written) {
        // Egress writes through a 64 KB buffer: a process killed before its first flush leaves nothing.
        unreadable.push(part.track);
        continue;
      }
      // A fragmented MP4 (egress's H.264 track files) cut short keeps its whole fragments.
      if (path.endsWith('.mp4')) {
        const trim = await trimToLastFragment(path).catch(() => undefined);
        if (trim?.fragmented && trim.wholeFragments === 0) {
          unreadable.push(part.track);
          continue;
        }
      }
      const probe = await ffprobe(path).catch(() => undefined);
      const codec = probe?.codecs.find((c) => c.type === part.track)?.codec;
      // An MP4 whose header names the codec but whose frames ffprobe cannot reach (its first
      // fragment overwritten) has no duration: joined, the track would silently vanish from the file.
      const framesUnreachable = path.endsWith('.mp4') && probe?.durationS === undefined;
      if (!codec || framesUnreachable) {
        unreadable.push(part.track);
        continue;
      }
      // Each file is placed by when its egress received the track's first packet. Without that
      // (an egress older than the file result's started_at, or LiveKit never said), the egress's
      // start is within a few ms of it; failing that (a dropped egress_started webhook, an end event
      // without it) the file is still the track, aligned on when it was asked for.
      inputs.push({
        track: part.track,
        path,
        zeroAt: part.mediaStartedAt ?? part.startedAt ?? part.requestedAt,
        startS: probe?.startS ?? 0,
        durationS: probe?.durationS,
        codec,
      });
    }
    if (inputs.length === 0) {
      return {
        ok: false,
        reason: unreadable.length > 0 ? `the ${unreadable.join(' and ')} file is unreadable` : 'egress produced no file',
      };
    }
    if (unreadable.length > 0) return { ok: false, reason: `the ${unreadable.join(' and ')} file is empty or unreadable (cut short?)` };

    const plan = planJoin(inputs, recording.endedAt ?? undefined, keepOpusInMp4);
    const target = this.files.incomingPath(recording.location);
    const partial = `${target}.partial`;
    try {
      await run('ffmpeg', joinArgs(inputs, plan, partial), { timeout: 600_000, maxBuffer: 4 * 1024 * 1024 });
    } catch (error) {
      await unlink(partial).catch(() => undefined);
      const stderr = (error as { stderr?: string }).stderr?.trim() ?? '';
      // A full disk is no verdict on the files: thrown, the job is tried again (the disk watermark
      // check releases its reserve, or an operator frees space) and the parts are kept meanwhile.
      if (/No space left on device|ENOSPC/i.test(stderr))
        throw new Error(`joining the tracks needs more free space: ${lastLine(stderr)}`, { cause: error });
      return { ok: false, reason: `joining the tracks failed: ${stderr === '' ? String(error) : lastLine(stderr)}` };
    }
    await rename(partial, target);
    return { ok: true, path: target };
  }

  /**
   * The track files, once the joined file is complete and in place, with whatever a start that was
   * replaced (stuck waiting for a keyframe) had begun to write.
   */
  async removeParts(parts: readonly RecordingEgress[]): Promise<void> {
    const locations = [...parts.map((p) => p.location), ...replacedAttempts(parts)];
    await Promise.all(locations.map((l) => unlink(this.files.incomingPath(l)).catch(() => undefined)));
  }
}

/** Where the attempts that were replaced (stuck waiting for a keyframe) began to write. */
export function replacedAttempts(parts: readonly Pick<RecordingEgress, 'location' | 'attempt'>[]): string[] {
  return parts.flatMap((p) => earlierAttempts(p.location, p.attempt));
}

/** `….video-2.webm` → `….video.webm`, `….video-1.webm`: the files of the attempts it replaced. */
function earlierAttempts(location: string, attempt: number): string[] {
  return Array.from({ length: attempt }, (_, k) =>
    location.replace(/\.(video|audio)(?:-\d+)?\.([a-z0-9]+)$/, k === 0 ? '.$1.$2' : `.$1-${k}.$2`),
  );
}

function lastLine(text: string): string {
  return text.split('\n').pop() ?? text;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile() && s.size > 0,
    () => false,
  );
}
