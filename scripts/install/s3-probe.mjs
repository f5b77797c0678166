// Can Tally record into this bucket? PUTs a small probe object, HEADs it (the size must match), then
// DELETEs it - the three calls the worker's upload makes - with the credentials Tally will use.
// Prints "ok" and exits 0, else prints which call failed and why and exits 1. Used by install.sh
// (scripts/install/objects.sh) before it writes TALLY_S3_* into tally.env.
//
// Usage: TALLY_S3_ENDPOINT=... TALLY_S3_BUCKET=... TALLY_S3_REGION=... TALLY_S3_ACCESS_KEY=...
//        TALLY_S3_SECRET_KEY=... TALLY_S3_FORCE_PATH_STYLE=true|false node s3-probe.mjs
import console from 'node:console';
import process from 'node:process';
import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

const env = process.env;
const bucket = env.TALLY_S3_BUCKET ?? '';
const client = new S3Client({
  region: env.TALLY_S3_REGION || 'us-east-1',
  endpoint: env.TALLY_S3_ENDPOINT || undefined,
  forcePathStyle: env.TALLY_S3_FORCE_PATH_STYLE !== 'false',
  credentials: { accessKeyId: env.TALLY_S3_ACCESS_KEY ?? '', secretAccessKey: env.TALLY_S3_SECRET_KEY ?? '' },
  maxAttempts: 2,
});
const key = `.tally-install-probe/${randomBytes(8).toString('hex')}`;
const body = randomBytes(64);

/** step NAME FN: runs one S3 call; on failure says which one and what the server answered. */
async function step(name, fn) {
  try {
    return await fn();
  } catch (error) {
    const status = error?.$metadata?.httpStatusCode;
    const code = error?.Code ?? error?.name ?? 'error';
    console.log(`${name} s3://${bucket}/${key} failed: ${code}${status ? ` (HTTP ${status})` : ''}: ${error?.message ?? error}`);
    process.exit(1);
  }
}

await step('PUT', () => client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body })));
const head = await step('HEAD', () => client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })));
if (Number(head.ContentLength) !== body.length) {
  console.log(`HEAD s3://${bucket}/${key}: size ${head.ContentLength}, expected ${body.length}`);
  process.exit(1);
}
await step('DELETE', () => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
console.log('ok');
