import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";

export interface PresignRequest {
  key: string;
  contentType: string;
  size: number;
  ttlSeconds: number;
}

/**
 * In production, a presigned PUT straight to R2's S3 API, so the bytes never pass through a
 * Worker request (whose body Cloudflare caps at 100 MB on most plans).
 * https://developers.cloudflare.com/r2/api/s3/presigned-urls/
 *
 * Content-Type and Content-Length are signed headers: a PUT with another type or size fails
 * R2's signature check, so the upload limit holds. Nothing else is signed: owner and expiry
 * live in our D1 row (the caller writes it), never in `x-amz-meta-*` headers a client would
 * have to repeat. Returns undefined when no R2 S3 credentials are configured (local
 * development), where the Worker serves its own signed URL instead.
 */
export async function presignR2Put(env: Env, request: PresignRequest): Promise<string | undefined> {
  const client = r2Client(env);
  if (!client) return undefined;
  const command = new PutObjectCommand({ Bucket: env.R2_BUCKET_NAME || "ffedge-files", Key: request.key, ContentType: request.contentType, ContentLength: request.size });
  // The S3 presigner leaves content-type unsigned unless told otherwise.
  return getSignedUrl(client, command, { expiresIn: request.ttlSeconds, signableHeaders: new Set(["content-type", "content-length"]) });
}

/** Whether presigned R2 URLs can be made here (R2 S3 credentials are configured). */
export function canPresign(env: Env): env is Env & Record<"R2_ACCOUNT_ID" | "R2_ACCESS_KEY_ID" | "R2_SECRET_ACCESS_KEY", string> {
  return Boolean(env.R2_ACCOUNT_ID && env.R2_ACCESS_KEY_ID && env.R2_SECRET_ACCESS_KEY);
}

function r2Client(env: Env): S3Client | undefined {
  if (!canPresign(env)) return undefined;
  return new S3Client({
    region: "auto",
    // R2_S3_ENDPOINT names a jurisdiction endpoint (`<account>.eu.r2.cloudflarestorage.com`) or, in tests, a local S3 server.
    endpoint: env.R2_S3_ENDPOINT || `https://${env.R2_ACCOUNT_ID}.r2.cloudflarestorage.com`,
    forcePathStyle: true,
    credentials: { accessKeyId: env.R2_ACCESS_KEY_ID, secretAccessKey: env.R2_SECRET_ACCESS_KEY },
    // The SDK's default CRC32 of the (empty) body would be signed into the URL and fail every real upload.
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
}
