import { readFileSync } from 'node:fs';
import { type CapacityModel, DEFAULT_MODEL, type DiskWatermarkSettings, parseCapacityProfile } from '@tally/capacity';

export type CapacityModelOptions = Readonly<{
  /** Seconds of writing a writer reserves on its filesystem; the model's default when absent. */
  diskHorizonS?: number;
  /** The operator's watermarks (tally.env), so admission and the worker's disk check stop at the same line. */
  diskWatermarks?: DiskWatermarkSettings;
}>;

/** The built-in measured model, or the operator's calibration profile; a broken profile stops startup. */
export function loadCapacityModel(profilePath: string | undefined, options: CapacityModelOptions = {}): CapacityModel {
  const model = profilePath === undefined ? DEFAULT_MODEL : parseProfile(profilePath);
  return {
    ...model,
    disk: {
      ...model.disk,
      horizonS: options.diskHorizonS ?? model.disk.horizonS,
      watermarks: options.diskWatermarks ?? model.disk.watermarks,
    },
  };
}

function parseProfile(profilePath: string): CapacityModel {
  const result = parseCapacityProfile(JSON.parse(readFileSync(profilePath, 'utf8')));
  if (!result.ok) throw new Error(`capacity profile ${profilePath} is invalid:\n  ${result.issues.join('\n  ')}`);
  return result.model;
}
