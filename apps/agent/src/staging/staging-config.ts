import { z } from 'zod';

/** The origin's object store, as `install.sh --join` writes it from the join answer (same names as the origin's). */
export const ObjectStoreEnvSchema = z.object({
  TALLY_S3_BUCKET: z.string().min(1).optional(),
  TALLY_S3_ENDPOINT: z
    .string()
    .refine((v) => URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol), 'must be an http: or https: URL')
    .optional(),
  TALLY_S3_REGION: z.string().min(1).default('us-east-1'),
  TALLY_S3_ACCESS_KEY: z.string().min(1).optional(),
  TALLY_S3_SECRET_KEY: z.string().min(1).optional(),
  TALLY_S3_FORCE_PATH_STYLE: z.stringbool().default(true),
});

export type StagingStoreConfig = Readonly<{
  bucket: string;
  endpoint: string | undefined;
  region: string;
  accessKey: string;
  secretKey: string;
  forcePathStyle: boolean;
}>;

/** Undefined without a bucket; an error naming the variables when the bucket has no key. */
export function objectStoreConfig(e: z.infer<typeof ObjectStoreEnvSchema>): StagingStoreConfig | undefined | Error {
  if (e.TALLY_S3_BUCKET === undefined) return undefined;
  if (e.TALLY_S3_ACCESS_KEY === undefined || e.TALLY_S3_SECRET_KEY === undefined)
    return new Error('TALLY_S3_ACCESS_KEY, TALLY_S3_SECRET_KEY: required when TALLY_S3_BUCKET is set');
  return Object.freeze({
    bucket: e.TALLY_S3_BUCKET,
    endpoint: e.TALLY_S3_ENDPOINT,
    region: e.TALLY_S3_REGION,
    accessKey: e.TALLY_S3_ACCESS_KEY,
    secretKey: e.TALLY_S3_SECRET_KEY,
    forcePathStyle: e.TALLY_S3_FORCE_PATH_STYLE,
  });
}
