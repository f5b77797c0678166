import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from './child.js';
import { waitFor } from './ports.js';

const TURNSERVER = '/usr/bin/turnserver';

/** TURN over TLS as `install.sh --domain` runs it: coturn with a certificate for `domain`, on `tlsPort`. */
export type TestTurn = Readonly<{ domain: string; certFile: string; keyFile: string; tlsPort: number }>;

/** A running coturn: where clients reach it, and the secret it checks TURN REST credentials with. */
export type TestCoturn = Readonly<{
  host: string;
  port: number;
  secret: string;
  logFile: string;
  stop(): Promise<void>;
}>;

/**
 * Debian's coturn configured as scripts/install/turn.sh configures it: TLS only on `turn.tlsPort`,
 * TURN REST credentials from a shared secret (`use-auth-secret`), relays from `nodeIp` and only
 * towards it, over UDP only. livekit-server (rtc.turn_servers) and ingress (whip_turn_servers) mint
 * clients' credentials from `secret`.
 */
export async function startCoturn(turn: TestTurn, nodeIp: string): Promise<TestCoturn> {
  if (!existsSync(TURNSERVER)) throw new Error(`no coturn at ${TURNSERVER}: apt-get install -y coturn`);
  const dir = mkdtempSync(join(tmpdir(), 'tally-coturn-'));
  const secret = randomBytes(24).toString('hex');
  const config = [
    `tls-listening-port=${turn.tlsPort}`,
    `listening-ip=${nodeIp}`,
    'no-udp',
    'no-tcp',
    'no-dtls',
    'no-tlsv1',
    'no-tlsv1_1',
    `cert=${turn.certFile}`,
    `pkey=${turn.keyFile}`,
    'use-auth-secret',
    `static-auth-secret=${secret}`,
    `realm=${turn.domain}`,
    `relay-ip=${nodeIp}`,
    'denied-peer-ip=0.0.0.0-255.255.255.255',
    'denied-peer-ip=::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    `allowed-peer-ip=${nodeIp}`,
    'no-multicast-peers',
    'no-tcp-relay',
    'no-stun',
    'no-rfc5780',
    'no-cli',
    'no-software-attribute',
    'log-file=stdout',
    'simple-log',
    `pidfile=${join(dir, 'turnserver.pid')}`,
    `userdb=${join(dir, 'turndb')}`,
  ].join('\n');
  const configFile = join(dir, 'turnserver.conf');
  writeFileSync(configFile, `${config}\n`);
  const logFile = join(dir, 'turnserver.log');
  const child = startChild(TURNSERVER, ['-c', configFile], logFile);
  await waitFor(
    `coturn on ${nodeIp}:${turn.tlsPort}`,
    () =>
      new Promise<true | undefined>((resolve) => {
        const socket = connect(turn.tlsPort, nodeIp, () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(undefined));
      }),
    30_000,
  );
  return {
    host: turn.domain,
    port: turn.tlsPort,
    secret,
    logFile,
    async stop() {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
