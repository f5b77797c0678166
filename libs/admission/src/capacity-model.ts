import { readFileSync } from 'node:fs';
import { type CapacityModel, DEFAULT_MODEL, parseCapacityProfile } from '@tally/capacity';

/** The built-in measured model, or the operator's calibration profile; a broken profile stops startup. */
export function loadCapacityModel(profilePath: string | undefined): CapacityModel {
  if (profilePath === undefined) return DEFAULT_MODEL;
  const result = parseCapacityProfile(JSON.parse(readFileSync(profilePath, 'utf8')));
  if (!result.ok) throw new Error(`capacity profile ${profilePath} is invalid:\n  ${result.issues.join('\n  ')}`);
  return result.model;
}
