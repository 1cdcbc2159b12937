import { z } from "zod";
import { UsageSchema } from "./files";

/** `GET /v1/me`. FFHub's clients read `user_id`, `email` and `remaining_credits`. */
export const MeSchema = z
  .object({
    user_id: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    remaining_credits: z.number().nonnegative().meta({ description: "Processing seconds left today (UTC) under DAILY_TASK_SECONDS: FFHub's credits" }),
    created_at: z.string(),
    usage: UsageSchema,
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
