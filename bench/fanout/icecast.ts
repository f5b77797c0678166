import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '@tally/testing';

export type Icecast = Readonly<{ pid: number; listenUrl: string; stop(): Promise<void> }>;

/**
 * Debian's icecast2 with one mount fed by ffmpeg: the same QVGA 8 fps JPEG stream the camera sends
 * (concatenated JPEGs, passed through by Icecast's generic format), so both servers move the same bytes.
 */
export async function startIcecast(): Promise<Icecast> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-icecast-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const password = 'fanout-bench';
  const asRoot = process.getuid?.() === 0;
  writeFileSync(
    join(dir, 'icecast.xml'),
    `<icecast>
  <limits><clients>20000</clients><sources>2</sources><queue-size>524288</queue-size><burst-size>65535</burst-size></limits>
  <authentication><source-password>${password}</source-password><admin-password>${password}</admin-password></authentication>
  <hostname>127.0.0.1</hostname>
  <listen-socket><port>${port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
  <paths><logdir>${dir}</logdir><webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
  <logging><errorlog>error.log</errorlog><accesslog>-</accesslog><loglevel>2</loglevel></logging>
  <security><chroot>0</chroot>${asRoot ? '<changeowner><user>nobody</user><group>nogroup</group></changeowner>' : ''}</security>
</icecast>`,
  );
  const server = spawn('icecast2', ['-c', join(dir, 'icecast.xml')], { stdio: 'ignore' });
  await waitFor('icecast2', async () => ((await fetch(`http://127.0.0.1:${port}/status-json.xsl`)).ok ? true : undefined), 15_000);
  const source = spawn(
    'ffmpeg',
    [
      '-v',
      'error',
      '-re',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=8',
      '-c:v',
      'mjpeg',
      '-q:v',
      '8',
      '-f',
      'mjpeg',
      '-content_type',
      'image/jpeg',
      `icecast://source:${password}@127.0.0.1:${port}/camera`,
    ],
    { stdio: 'ignore' },
  );
  const listenUrl = `http://127.0.0.1:${port}/camera`;
  await waitFor(
    'the icecast mount',
    async () => {
      const status = (await (await fetch(`http://127.0.0.1:${port}/status-json.xsl`)).json()) as { icestats?: { source?: unknown } };
      return status.icestats?.source ? true : undefined;
    },
    15_000,
  );
  return {
    pid: server.pid ?? 0,
    listenUrl,
    async stop() {
      await Promise.all([stop(source), stop(server)]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
