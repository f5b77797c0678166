import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '@tally/config';

const clients = new WeakMap<S3Config, S3Client>();

/** One client per configured bucket: the SDK keeps its endpoint resolution and credentials there. */
function clientFor(s3: S3Config): S3Client {
  let client = clients.get(s3);
  if (!client) {
    client = new S3Client({
      region: s3.region,
      ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
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
export function presignS3Get(s3: S3Config, key: string, now: Date, expiresS: number): Promise<string> {
  return getSignedUrl(clientFor(s3), new GetObjectCommand({ Bucket: s3.bucket, Key: key }), { expiresIn: expiresS, signingDate: now });
}
