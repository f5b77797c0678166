import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type TestCertificate = Readonly<{ caFile: string; certFile: string; keyFile: string }>;

/**
 * A throwaway certificate authority and a server certificate for `domain` it signed (openssl):
 * what a client must be told to trust, like a `--tls internal` install's CA.
 */
export async function issueTestCertificate(domain: string): Promise<TestCertificate> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-test-ca-'));
  const caFile = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  const certFile = join(dir, 'server.crt');
  const keyFile = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const ext = join(dir, 'server.ext');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-days',
    '2',
    '-subj',
    '/CN=Tally test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run('openssl', ['req', ...ec, '-keyout', keyFile, '-out', csr, '-subj', `/CN=${domain}`]);
  writeFileSync(ext, `subjectAltName=DNS:${domain}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    caFile,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-out',
    certFile,
    '-days',
    '2',
    '-extfile',
    ext,
  ]);
  return { caFile, certFile, keyFile };
}
