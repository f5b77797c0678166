import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';

/**
 * A deleted app's files on this origin: its recordings and ladders (`<recordings>/<appId>`), what
 * egress was still writing (`<recordings>/.incoming/<appId>`) and its HLS segments (`<hls>/<appId>`).
 */
@Injectable()
export class AppFiles {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  async remove(appId: string): Promise<void> {
    const { recordings, hls } = this.config;
    for (const dir of [join(recordings.dir, appId), join(recordings.dir, '.incoming', appId), join(hls.dir, appId)]) {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
