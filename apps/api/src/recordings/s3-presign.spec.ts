import { describe, expect, it } from 'vitest';
import { presignS3Get } from './s3-presign.js';

describe(presignS3Get.name, () => {
  it('reproduces the presigned GET of the AWS Signature Version 4 documentation', () => {
    const url = presignS3Get(
      {
        bucket: 'examplebucket',
        endpoint: 'https://s3.amazonaws.com',
        region: 'us-east-1',
        accessKey: 'AKIAIOSFODNN7EXAMPLE',
        secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        forcePathStyle: false,
      },
      'test.txt',
      new Date('2013-05-24T00:00:00Z'),
      86_400,
    );
    expect(url).toBe(
      'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
        '&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z' +
        '&X-Amz-Expires=86400&X-Amz-SignedHeaders=host' +
        '&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    );
  });

  it('puts the bucket in the path for path-style endpoints and escapes the key', () => {
    const url = new URL(
      presignS3Get(
        { bucket: 'rec', endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', accessKey: 'k', secretKey: 's', forcePathStyle: true },
        'app_x/a b.mp4',
        new Date('2026-01-01T00:00:00Z'),
        60,
      ),
    );
    expect(url.host).toBe('127.0.0.1:9000');
    expect(url.pathname).toBe('/rec/app_x/a%20b.mp4');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
  });
});
