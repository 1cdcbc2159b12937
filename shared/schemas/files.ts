import { z } from "zod";
import { decimalInteger } from "./tasks";

/** The record every upload endpoint answers with (service spec, "Uploaded file record"). */
export const UploadRecordSchema = z
  .object({
    url: z.url().meta({ example: "http://localhost:8787/uploads/usr_3k9x/f1c2b3a4d5e6f708.mp4" }),
    cn_url: z.url(),
    key: z.string().meta({ example: "uploads/usr_3k9x/f1c2b3a4d5e6f708.mp4" }),
    md5: z.string().regex(/^[0-9a-f]{32}$/),
    size: z.number().int().nonnegative(),
    content_type: z.string(),
    expires_at: z.string().meta({ example: "2026-11-22T21:12:52.123Z" }),
  })
  .meta({ id: "UploadRecord" });
export type UploadRecord = z.infer<typeof UploadRecordSchema>;

/** One of the caller's stored files, as GET /api/files lists it. */
export const StoredFileSchema = UploadRecordSchema.extend({
  md5: z.string().regex(/^([0-9a-f]{32})?$/).meta({ description: "Empty for a presigned upload: its bytes went straight to R2 and were never read by the service" }),
  filename: z.string().nullable().meta({ example: "clip.mp4", description: "The name the file was uploaded under (sanitised), or the output's name; null if none was given" }),
  created_at: z.string().meta({ example: "2026-11-21T21:12:52.123Z" }),
}).meta({ id: "StoredFile" });

export const ListFilesQuerySchema = z.object({
  limit: decimalInteger(1, 100).optional().default(20),
  offset: decimalInteger(0, 1_000_000_000).optional().default(0),
});

export const FileListSchema = z.object({ total: z.number().int(), files: z.array(StoredFileSchema) }).meta({ id: "FileList", description: "The caller's unexpired uploads and task outputs, newest first" });

export const Base64UploadSchema = z
  .object({
    data: z.string().meta({ example: "data:text/plain;base64,aGVsbG8=" }),
    filename: z.string().max(255).optional(),
  })
  .meta({ id: "Base64Upload" });

export const UrlUploadSchema = z
  .object({ url: z.string().max(2048).meta({ example: "https://example.com/clip.mp4" }) })
  .meta({ id: "UrlUpload" });

export const SignUploadRequestSchema = z
  .object({
    filename: z.string().min(1).max(255),
    size: z.number().int().positive(),
    content_type: z.string().min(1).max(255),
  })
  .meta({ id: "SignUploadRequest" });

export const SignUploadResponseSchema = z
  .object({
    upload_url: z.url(),
    public_url: z.url(),
    key: z.string(),
    expires_at: z.string(),
    content_type: z.string(),
  })
  .meta({ id: "SignUploadResponse" });

export const UsageSchema = z
  .object({
    tasks_today: z.number().int().meta({ description: "Tasks submitted since 00:00 UTC" }),
    seconds_processed_today: z.number().meta({ description: "Running time of tasks that finished since 00:00 UTC" }),
    bytes_stored: z.number().int().meta({ description: "Bytes of uploads and outputs not yet expired" }),
    running_tasks: z.number().int(),
    waiting_tasks: z.number().int().meta({ description: "Pending tasks waiting for a running slot" }),
    max_running_tasks: z.number().int(),
    rate_limit: z.object({ requests: z.number().int(), period_seconds: z.number().int() }),
  })
  .meta({ id: "Usage" });
