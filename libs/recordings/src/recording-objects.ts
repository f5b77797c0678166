import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '@tally/config';

/** One PUT carries up to 5 GiB; a larger file goes up in parts of this size. */
const SINGLE_PUT_MAX_BYTES = 4 * 1024 ** 3;
const PART_BYTES = 256 * 1024 ** 2;

type Sdk = typeof import('@aws-sdk/client-s3');

/**
 * The adapter in front of the recordings bucket: put a file, fetch one, read an object's size, delete one.
 * The SDK is loaded on first use (it is ~30 MB of idle memory); Tally retries on its own schedule,
 * so the SDK makes one attempt per call, and a server that does not answer fails the call.
 */
export class RecordingObjects {
  private sdk: Promise<Sdk> | undefined;
  private client: S3Client | undefined;

  constructor(private readonly s3: S3Config) {}

  /** Uploads the file at `path` (`sizeBytes` long) as `key`. */
  async put(key: string, path: string, sizeBytes: number): Promise<void> {
    const { sdk, client } = await this.open();
    const Bucket = this.s3.bucket;
    if (sizeBytes <= SINGLE_PUT_MAX_BYTES) {
      await client.send(new sdk.PutObjectCommand({ Bucket, Key: key, Body: createReadStream(path), ContentLength: sizeBytes }));
      return;
    }
    const { UploadId } = await client.send(new sdk.CreateMultipartUploadCommand({ Bucket, Key: key }));
    try {
      const parts: { ETag: string | undefined; PartNumber: number }[] = [];
      for (let start = 0, PartNumber = 1; start < sizeBytes; start += PART_BYTES, PartNumber += 1) {
        const end = Math.min(start + PART_BYTES, sizeBytes);
        const Body = createReadStream(path, { start, end: end - 1 });
        const { ETag } = await client.send(
          new sdk.UploadPartCommand({ Bucket, Key: key, UploadId, PartNumber, Body, ContentLength: end - start }),
        );
        parts.push({ ETag, PartNumber });
      }
      await client.send(new sdk.CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
    } catch (error) {
      await client.send(new sdk.AbortMultipartUploadCommand({ Bucket, Key: key, UploadId })).catch(() => undefined);
      throw error;
    }
  }

  /** The object's size in bytes, or undefined when there is no such object. */
  async sizeOf(key: string): Promise<number | undefined> {
    const { sdk, client } = await this.open();
    try {
      const head = await client.send(new sdk.HeadObjectCommand({ Bucket: this.s3.bucket, Key: key }));
      return Number(head.ContentLength ?? 0);
    } catch (error) {
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
      throw error;
    }
  }

  /** Writes the object `key` to `path` (created or replaced). */
  async get(key: string, path: string): Promise<void> {
    const { sdk, client } = await this.open();
    const object = await client.send(new sdk.GetObjectCommand({ Bucket: this.s3.bucket, Key: key }));
    if (!object.Body) throw new Error(`the object ${key} has no body`);
    await pipeline(object.Body as Readable, createWriteStream(path));
  }

  /** Deleting an object that is not there succeeds. */
  async remove(key: string): Promise<void> {
    const { sdk, client } = await this.open();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.s3.bucket, Key: key }));
  }

  close(): void {
    this.client?.destroy();
    this.client = undefined;
  }

  private async open(): Promise<{ sdk: Sdk; client: S3Client }> {
    const sdk = await (this.sdk ??= import('@aws-sdk/client-s3'));
    this.client ??= new sdk.S3Client({
      region: this.s3.region,
      ...(this.s3.endpoint ? { endpoint: this.s3.endpoint } : {}),
      forcePathStyle: this.s3.forcePathStyle,
      credentials: { accessKeyId: this.s3.accessKey, secretAccessKey: this.s3.secretKey },
      maxAttempts: 1,
      // A request that stalls (no byte either way for 60 s) fails and is retried, never holding its job for good.
      requestHandler: { connectionTimeout: 5_000, socketTimeout: 60_000 },
    });
    return { sdk, client: this.client };
  }
}
