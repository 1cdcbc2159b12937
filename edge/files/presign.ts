import { AwsClient } from "aws4fetch";

export interface PresignRequest {
  key: string;
  contentType: string;
  size: number;
  userId: string;
  expiresAt: string;
  ttlSeconds: number;
}

/**
 * In production, a presigned PUT straight to R2's S3 API, so the bytes never pass through a
 * Worker request (whose body Cloudflare caps at 100 MB on most plans). The expiry and owner
 * travel as signed object metadata, which the CDN route checks like any upload's.
 * https://developers.cloudflare.com/r2/api/s3/presigned-urls/
 * Returns undefined when no R2 S3 credentials are configured (local development), where the
 * Worker serves its own signed URL instead. The caller records the file row: the bytes never
 * pass through us, so its MD5 stays unknown (R2's ETag of a single PUT is that MD5).
 */
export async function presignR2Put(env: Env, request: PresignRequest): Promise<string | undefined> {
  if (!env.R2_ACCOUNT_ID || !env.R2_ACCESS_KEY_ID || !env.R2_SECRET_ACCESS_KEY) return undefined;
  const client = new AwsClient({ accessKeyId: env.R2_ACCESS_KEY_ID, secretAccessKey: env.R2_SECRET_ACCESS_KEY, service: "s3", region: "auto" });
  const url = new URL(`https://${env.R2_ACCOUNT_ID}.r2.cloudflarestorage.com/${env.R2_BUCKET_NAME ?? "ffedge-files"}/${request.key}`);
  url.searchParams.set("X-Amz-Expires", String(request.ttlSeconds));
  const signed = await client.sign(new Request(url, {
    method: "PUT",
    headers: {
      "content-type": request.contentType,
      "content-length": String(request.size),
      "x-amz-meta-user_id": request.userId,
      "x-amz-meta-expires_at": request.expiresAt,
    },
  }), { aws: { signQuery: true } });
  return signed.url;
}
