import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '@tally/config';

// The AWS SDK is loaded on the first S3 download link, not at boot: it is ~30 MB of the API's idle
// memory on a node that keeps its recordings on local disk (docs/capacity.md, bench:base-load).
type Sdk = Readonly<{
  client: typeof import('@aws-sdk/client-s3');
  presigner: typeof import('@aws-sdk/s3-request-presigner');
}>;
let sdk: Promise<Sdk> | undefined;
const loadSdk = (): Promise<Sdk> =>
  (sdk ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]).then(([client, presigner]) => ({
    client,
    presigner,
  })));

const clients = new WeakMap<S3Config, S3Client>();

/**
 * One signing client per configured bucket: the SDK keeps its endpoint resolution and credentials
 * there. Links are signed for the public endpoint when there is one: a SigV4 signature covers the
 * host, so a link must name the host its player reaches (Caddy's `--domain` in front of the bundled
 * store), and a proxy in between must pass the Host header on unchanged.
 */
function clientFor({ client: { S3Client } }: Sdk, s3: S3Config): S3Client {
  let client = clients.get(s3);
  if (!client) {
    const endpoint = s3.publicEndpoint ?? s3.endpoint;
    client = new S3Client({
      region: s3.region,
      ...(endpoint ? { endpoint } : {}),
      forcePathStyle: s3.forcePathStyle,
      credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
      // A plain download link: no x-amz-checksum-mode, which some S3-compatible stores reject.
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    clients.set(s3, client);
  }
  return client;
}

/**
 * A SigV4 query-signed GET URL for one object (AWS "presigned URL"), so a client downloads a
 * recording straight from the bucket without Tally relaying the bytes.
 */
export async function presignS3Get(s3: S3Config, key: string, now: Date, expiresS: number): Promise<string> {
  const loaded = await loadSdk();
  const command = new loaded.client.GetObjectCommand({ Bucket: s3.bucket, Key: key });
  return loaded.presigner.getSignedUrl(clientFor(loaded, s3), command, { expiresIn: expiresS, signingDate: now });
}
