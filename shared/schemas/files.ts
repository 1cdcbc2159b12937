import { z } from "@hono/zod-openapi";

/** The record every upload endpoint answers with (service spec, "Uploaded file record"). */
export const UploadRecordSchema = z
  .object({
    url: z.url().openapi({ example: "http://localhost:8787/uploads/usr_3k9x/f1c2b3a4d5e6f708.mp4" }),
    cn_url: z.url(),
    key: z.string().openapi({ example: "uploads/usr_3k9x/f1c2b3a4d5e6f708.mp4" }),
    md5: z.string().regex(/^[0-9a-f]{32}$/),
    size: z.number().int().nonnegative(),
    content_type: z.string(),
    expires_at: z.string().openapi({ example: "2026-11-22T21:12:52.123Z" }),
  })
  .openapi("UploadRecord");
export type UploadRecord = z.infer<typeof UploadRecordSchema>;

export const Base64UploadSchema = z
  .object({
    data: z.string().openapi({ example: "data:text/plain;base64,aGVsbG8=" }),
    filename: z.string().max(255).optional(),
  })
  .openapi("Base64Upload");

export const UrlUploadSchema = z
  .object({ url: z.string().max(2048).openapi({ example: "https://example.com/clip.mp4" }) })
  .openapi("UrlUpload");

export const SignUploadRequestSchema = z
  .object({
    filename: z.string().min(1).max(255),
    size: z.number().int().positive(),
    content_type: z.string().min(1).max(255),
  })
  .openapi("SignUploadRequest");

export const SignUploadResponseSchema = z
  .object({
    upload_url: z.url(),
    public_url: z.url(),
    key: z.string(),
    expires_at: z.string(),
    content_type: z.string(),
  })
  .openapi("SignUploadResponse");

export const UsageSchema = z
  .object({
    tasks_today: z.number().int().openapi({ description: "Tasks submitted since 00:00 UTC" }),
    seconds_processed_today: z.number().openapi({ description: "Running time of tasks that finished since 00:00 UTC" }),
    bytes_stored: z.number().int().openapi({ description: "Bytes of uploads and outputs not yet expired" }),
    running_tasks: z.number().int(),
    waiting_tasks: z.number().int().openapi({ description: "Pending tasks waiting for a running slot" }),
    max_running_tasks: z.number().int(),
    rate_limit: z.object({ requests: z.number().int(), period_seconds: z.number().int() }),
  })
  .openapi("Usage");

export const MeSchema = z
  .object({
    user_id: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    created_at: z.string(),
    usage: UsageSchema,
  })
  .openapi("Me");
