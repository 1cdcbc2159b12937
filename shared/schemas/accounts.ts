import { z } from "zod";
import { UsageSchema } from "./files";

/**
 * The upload limits this deployment applies, as `GET /v1/me` reports them. Cloudflare refuses
 * request bodies over its plan's limit (100 MB Free and Pro, 200 MB Business, 500 MB Enterprise)
 * with its own 413 before the Worker runs:
 * https://developers.cloudflare.com/workers/platform/limits/#request-limits
 */
export const UploadLimitsSchema = z
  .object({
    max_upload_bytes: z.number().int().positive().meta({
      example: 1073741824,
      description: "The largest file any upload path stores (MAX_UPLOAD_BYTES). A presigned PUT (POST /v1/uploads/sign), tus (/api/upload/tus) and URL uploads reach it whatever the plan: their bytes never pass through one large request body",
    }),
    max_request_body_bytes: z.number().int().positive().meta({
      example: 104857600,
      description:
        "The largest request body this deployment takes (MAX_REQUEST_BODY_BYTES): a multipart upload (file plus envelope) or a base64 body over it is answered 413 PAYLOAD_TOO_LARGE naming the presigned PUT and tus in `alternatives`; each tus chunk must fit too. In production it is the Cloudflare plan's limit: 100 MB on Free and Pro (104857600), 200 MB on Business, 500 MB on Enterprise; a larger body gets Cloudflare's own 413 before the service sees it",
    }),
    max_base64_body_bytes: z.number().int().positive().meta({
      example: 16777216,
      description: "The largest JSON body POST /api/upload/base64 takes (about 3/4 of it is file), else 413 BASE64_TOO_LARGE: base64 is held whole in the Worker's 128 MB of memory, about 3 times the file size",
    }),
  })
  .meta({ id: "UploadLimits" });

/** `GET /v1/me`. FFHub's clients read `user_id`, `email` and `remaining_credits`. */
export const MeSchema = z
  .object({
    user_id: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    remaining_credits: z.number().nonnegative().meta({ description: "Processing seconds left today (UTC) under DAILY_TASK_SECONDS: FFHub's credits" }),
    created_at: z.string(),
    usage: UsageSchema,
    limits: UploadLimitsSchema,
  })
  .meta({ id: "Me" });

export const EmailSchema = z.string().trim().toLowerCase().max(254).pipe(z.email());
export const PasswordSchema = z.string().min(10, "at least 10 characters").max(256, "at most 256 characters");

export const CredentialsSchema = z.object({ email: EmailSchema, password: PasswordSchema });
/** Sign-in takes any password string: its length is not a reason to answer differently. */
export const SigninSchema = z.object({ email: z.string().max(254).transform((email) => email.trim().toLowerCase()), password: z.string().max(256) });
export const ForgotSchema = z.object({ email: z.string().max(254).transform((email) => email.trim().toLowerCase()) });
export const TokenSchema = z.object({ token: z.string().min(1).max(128) });
export const ResetSchema = z.object({ token: z.string().min(1).max(128), password: PasswordSchema });
export const ChangePasswordSchema = z.object({ current_password: z.string().max(256), new_password: PasswordSchema });
export const DeleteAccountSchema = z.object({ password: z.string().max(256) });

export const SessionSchema = z.object({ user_id: z.string(), email: z.string().nullable(), csrf_token: z.string() });
export const MessageSchema = z.object({ message: z.string() });

export const ApiKeySchema = z.object({
  id: z.string().meta({ description: "The key's display prefix, e.g. ffe_AbCdEf12" }),
  name: z.string().nullable(),
  prefix: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable().meta({ description: "Exact to about a minute" }),
  revoked_at: z.string().nullable(),
});
export const ApiKeyListSchema = z.object({ keys: z.array(ApiKeySchema) });
export const CreateApiKeySchema = z.object({ name: z.string().trim().min(1).max(64) });
export const CreatedApiKeySchema = ApiKeySchema.pick({ id: true, name: true, prefix: true, created_at: true }).extend({ key: z.string().meta({ description: "Shown only in this response" }) });

export const UsageQuerySchema = z.object({ days: z.coerce.number().int().min(1).max(90).optional().default(30) });
export const DailyUsageSchema = z.object({
  days: z.array(z.object({ date: z.string(), tasks: z.number().int(), seconds: z.number() })),
  storage_bytes: z.number().int(),
  running_tasks: z.number().int(),
  waiting_tasks: z.number().int(),
  daily_quota: z.object({
    limit_seconds: z.number().int().meta({ description: "DAILY_TASK_SECONDS" }),
    processed_seconds: z.number().meta({ description: "Seconds ffmpeg ran for tasks that finished since 00:00 UTC" }),
    reserved_seconds: z.number().meta({ description: "The time limits the unfinished tasks hold until they end" }),
    remaining_seconds: z.number().meta({ description: "What a new task may still use today; below 1 s, POST /v1/tasks answers 429 QUOTA_EXCEEDED" }),
    resets_at: z.string().meta({ description: "The next 00:00 UTC" }),
  }),
  limits: z.object({
    max_running_tasks: z.number().int(),
    rate_limit: z.object({ requests: z.number().int(), period_seconds: z.number().int() }),
    max_upload_bytes: z.number().int(),
    task_timeout_seconds: z.number().int(),
    file_ttl_seconds: z.number().int(),
    daily_task_seconds: z.number().int(),
  }),
});

export const OutboxSchema = z.object({
  messages: z.array(z.object({ id: z.string(), to: z.string(), subject: z.string(), text: z.string(), links: z.array(z.string()), created_at: z.string() })),
});
