import { describe, expect, it } from 'vitest';
import { presignS3Get } from './s3-presign.js';

const aws = {
  bucket: 'examplebucket',
  endpoint: 'https://s3.amazonaws.com',
  publicEndpoint: undefined,
  region: 'us-east-1',
  accessKey: 'AKIAIOSFODNN7EXAMPLE',
  secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  forcePathStyle: false,
};

describe(presignS3Get.name, () => {
  it('signs a GET for the object in the bucket’s own host, valid for the asked time', async () => {
    const url = new URL(await presignS3Get(aws, 'test.txt', new Date('2013-05-24T00:00:00Z'), 86_400));
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe('https://examplebucket.s3.amazonaws.com/test.txt');
    expect(Object.fromEntries([...url.searchParams].filter(([k]) => k !== 'X-Amz-Signature'))).toMatchObject({
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request',
      'X-Amz-Date': '20130524T000000Z',
      'X-Amz-Expires': '86400',
      'X-Amz-SignedHeaders': 'host',
    });
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(url.searchParams.has('x-amz-checksum-mode')).toBe(false);
  });

  it('signs with the secret: another secret or another moment gives another signature', async () => {
    const at = new Date('2013-05-24T00:00:00Z');
    const signature = async (s3: typeof aws, now: Date) =>
      new URL(await presignS3Get(s3, 'test.txt', now, 60)).searchParams.get('X-Amz-Signature');
    const first = await signature(aws, at);
    expect(await signature(aws, at)).toBe(first);
    expect(await signature({ ...aws, secretKey: 'other' }, at)).not.toBe(first);
    expect(await signature(aws, new Date('2013-05-24T00:00:01Z'))).not.toBe(first);
  });

  it('puts the bucket in the path for path-style endpoints and escapes the key', async () => {
    const url = new URL(
      await presignS3Get(
        {
          bucket: 'rec',
          endpoint: 'http://127.0.0.1:9000',
          publicEndpoint: undefined,
          region: 'us-east-1',
          accessKey: 'k',
          secretKey: 's',
          forcePathStyle: true,
        },
        'app_x/a b.mp4',
        new Date('2026-01-01T00:00:00Z'),
        60,
      ),
    );
    expect(url.host).toBe('127.0.0.1:9000');
    expect(url.pathname).toBe('/rec/app_x/a%20b.mp4');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
  });

  it('signs for the public endpoint when there is one: the host players reach, the same bucket path', async () => {
    const store = { ...aws, endpoint: 'http://127.0.0.1:7070', forcePathStyle: true, bucket: 'tally-recordings' };
    const at = new Date('2026-01-01T00:00:00Z');
    const inside = new URL(await presignS3Get(store, 'app_x/rec.mp4', at, 60));
    const outside = new URL(await presignS3Get({ ...store, publicEndpoint: 'https://media.example.com' }, 'app_x/rec.mp4', at, 60));

    expect(inside.origin).toBe('http://127.0.0.1:7070');
    expect(outside.origin).toBe('https://media.example.com');
    expect(outside.pathname).toBe('/tally-recordings/app_x/rec.mp4');
    // The signature covers the host, so a link signed for one host is no good at the other.
    expect(outside.searchParams.get('X-Amz-Signature')).not.toBe(inside.searchParams.get('X-Amz-Signature'));
  });
});
