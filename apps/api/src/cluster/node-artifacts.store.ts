import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@tally/config';

/**
 * DIR/artifacts on the origin: the files its installer offers the nodes that join (LiveKit
 * binaries, the runtimes' downloads, the built services) and their manifest.json, all written by
 * root (scripts/install/artifacts.sh) and only read here.
 */
@Injectable()
export class NodeArtifactsStore {
  readonly dir: string;

  constructor(@Inject(CONFIG) config: Config) {
    this.dir = join(config.home, 'artifacts');
  }

  /** The manifest's JSON, or undefined when this origin has none. */
  async readManifest(): Promise<unknown> {
    const text = await readFile(join(this.dir, 'manifest.json'), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  }
}
