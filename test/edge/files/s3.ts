/**
 * The S3-compatible server the presigned-upload tests PUT to: `@20minutes/s3rver`, started by
 * `test/helpers/s3-server.ts` (a vitest globalSetup in Node). It verifies SigV4 signatures and
 * presigned-URL expiry like R2 does. Both sides import this module. No runtime-specific imports.
 */
declare module "vitest" {
  export interface ProvidedContext {
    /** Port of the S3 server on 127.0.0.1. */
    s3Port: number;
  }
}

/** s3rver's built-in account: the only key pair whose signatures it accepts. */
export const S3_ACCESS_KEY_ID = "S3RVER";
export const S3_SECRET_ACCESS_KEY = "S3RVER";
export const S3_BUCKET = "ffedge-files";
