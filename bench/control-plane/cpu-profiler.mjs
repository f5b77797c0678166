// Loaded into the API with `--import` (NODE_OPTIONS) by profile.ts: profiles from start, writes the profile on SIGUSR2.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import process from 'node:process';

const dir = process.env['TALLY_CPU_PROFILE_DIR'] ?? '/tmp';
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
await session.post('Profiler.start');
process.on('SIGUSR2', () => {
  void session.post('Profiler.stop').then(({ profile }) => {
    writeFileSync(`${dir}/api-${process.pid}.cpuprofile`, JSON.stringify(profile));
  });
});
