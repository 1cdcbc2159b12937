import { z } from "zod";

/** Names are the user's handle for a destination; they never look like an id (`dst_…`), so one field takes either. */
const DestinationNameSchema = z
  .string()
  .regex(/^(?!dst_)[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit, and not start with 'dst_'")
  .meta({ example: "archive" });

/**
 * Key prefixes are limited to the characters S3 documents as safe in object keys (no encoding,
 * so every S3-compatible server signs and stores the same key), without `..` or a leading '/'.
 */
const PrefixSchema = z
  .string()
  .max(512)
  .regex(/^(?!\/)[A-Za-z0-9!_.*'()\/-]*$/, "may only hold letters, digits and !_.*'()/- and must not start with '/'")
  .refine((prefix) => !prefix.split("/").includes(".."), { error: "must not contain a '..' segment" })
  .meta({ example: "ffedge/" });

export const CreateDestinationSchema = z
  .strictObject({
    name: DestinationNameSchema,
    type: z.literal("s3").meta({ description: "S3-compatible storage: AWS S3, Cloudflare R2, Google Cloud Storage (interoperability keys), MinIO" }),
    endpoint: z.string().max(2048).optional().meta({
      example: "https://0123456789abcdef.r2.cloudflarestorage.com",
      description: "The S3 API's origin (https, default port). Absent: AWS S3 in `region`. Judged by the same URL policy as task inputs: no private or internal hosts",
    }),
    region: z.string().regex(/^[a-z0-9-]{1,32}$/, "must be a region name such as us-east-1 (R2: auto)").meta({ example: "auto" }),
    bucket: z.string().regex(/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/, "must be a bucket name: 3-63 lowercase letters, digits, '.', '_' or '-'").meta({ example: "my-media" }),
    prefix: PrefixSchema.optional().default(""),
    access_key_id: z.string().regex(/^[\x21-\x7e]{1,128}$/, "must be 1-128 printable characters"),
    secret_access_key: z.string().regex(/^[\x21-\x7e]{1,256}$/, "must be 1-256 printable characters"),
    path_style: z.boolean().optional().meta({ description: "Address the bucket as `<endpoint>/<bucket>/<key>` rather than `<bucket>.<host>`. Default: true with a custom endpoint, false for AWS S3" }),
  })
  .meta({
    id: "CreateDestination",
    example: {
      name: "archive", type: "s3", endpoint: "https://0123456789abcdef.r2.cloudflarestorage.com", region: "auto", bucket: "my-media", prefix: "ffedge/",
      access_key_id: "AKIAIOSFODNN7EXAMPLE", secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    },
  });
export type CreateDestination = z.output<typeof CreateDestinationSchema>;

/**
 * A change: any field but the type; credentials may be replaced (each half alone), never read.
 * Strict, as the creation is: `type` or a misspelt field is refused by name rather than ignored.
 */
export const UpdateDestinationSchema = CreateDestinationSchema.omit({ type: true })
  .extend({ endpoint: z.string().max(2048).nullable().optional(), prefix: PrefixSchema.optional() })
  .partial()
  .meta({ id: "UpdateDestination", example: { secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", prefix: "ffedge/v2/" } });
export type UpdateDestination = z.output<typeof UpdateDestinationSchema>;

const DESTINATION_EXAMPLE = {
  id: "dst_0123456789abcdef01234567", name: "archive", type: "s3", endpoint: "https://0123456789abcdef.r2.cloudflarestorage.com", region: "auto", bucket: "my-media",
  prefix: "ffedge/", path_style: true, credentials_fingerprint: "AKIA…3f9a1c2d", created_at: "2026-11-26T10:00:00.000Z", updated_at: "2026-11-26T10:00:00.000Z",
};

export const DestinationSchema = z
  .object({
    id: z.string().meta({ example: "dst_0123456789abcdef01234567" }),
    name: z.string(),
    type: z.literal("s3"),
    endpoint: z.string().nullable(),
    region: z.string(),
    bucket: z.string(),
    prefix: z.string(),
    path_style: z.boolean(),
    credentials_fingerprint: z.string().meta({
      example: "AKIA…3f9a1c2d",
      description: "The first 4 characters of the access key id and a short hash of the secret: enough to tell which key pair is stored, never the secret",
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({
    id: "Destination",
    description: "An S3-compatible bucket that task outputs are delivered to; its credentials are stored encrypted and never returned",
    example: DESTINATION_EXAMPLE,
  });
export type Destination = z.infer<typeof DestinationSchema>;

/** Plain decimal digits only. (shared/schemas/tasks.ts has the same helper, but imports this module.) */
const decimalInteger = (min: number, max: number) =>
  z.string().regex(/^[0-9]{1,9}$/, "must be a decimal integer").transform(Number).pipe(z.number().int().min(min).max(max));

export const ListDestinationsQuerySchema = z.object({
  limit: decimalInteger(1, 100).optional().default(50),
  offset: decimalInteger(0, 1_000_000_000).optional().default(0),
});

export const DestinationListSchema = z
  .object({ total: z.number().int().meta({ description: "How many destinations the caller has (at most 20)" }), destinations: z.array(DestinationSchema) })
  .meta({
    id: "DestinationList",
    description: "A page of the caller's destinations, by name",
    example: { total: 1, destinations: [DESTINATION_EXAMPLE] },
  });

export const DestinationTestResultSchema = z
  .object({ ok: z.literal(true), key: z.string().meta({ description: "The probe object written and deleted again" }) })
  .meta({ id: "DestinationTestResult", example: { ok: true, key: "ffedge/.ffedge-probe-3f9a1c2d5e6b7a80" } });

/** `{destination_id}` in paths: the id or the name. */
export const DestinationIdParamSchema = z.object({ destination_id: z.string().min(1).max(64).meta({ param: { name: "destination_id", in: "path" } }) });

export const DELIVERY_MODES = ["copy", "only"] as const;

/** What a task names in `destination`. */
export const TaskDestinationSchema = z
  .object({
    id: z.string().min(1).max(64).meta({ description: "The destination's id or name" }),
    mode: z.enum(DELIVERY_MODES).optional().default("copy").meta({
      description: "`copy`: outputs stay on ffedge's CDN and are also delivered. `only`: once an output is delivered its copy here is deleted and its `url` points to the destination",
    }),
  })
  .meta({ id: "TaskDestination", example: { id: "archive", mode: "copy" } });
export type TaskDestination = z.output<typeof TaskDestinationSchema>;

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** Where one output went, on `outputs[i].destination`. */
export const OutputDestinationSchema = z
  .object({
    id: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    key: z.string().meta({ description: "The object key in the destination's bucket" }),
    url: z.string().optional().meta({ description: "The object's S3 URL, once delivered (readable as the bucket's own policy allows)" }),
    error: z.string().optional().meta({ description: "Why the last attempt failed" }),
    error_code: z.string().optional().meta({
      description: "DESTINATION_UNREACHABLE, DESTINATION_REFUSED, DESTINATION_CREDENTIALS, DESTINATION_NOT_FOUND, URL_HOST_BLOCKED, URL_NOT_ALLOWED, OUTPUT_MISSING, OUTPUT_EXPIRED",
    }),
    attempts: z.number().int().nonnegative(),
  })
  .meta({
    id: "OutputDestination",
    example: { id: "dst_0123456789abcdef01234567", status: "delivered", key: "ffedge/tsk_0123456789abcdef01234567/out.mp4", url: "https://0123456789abcdef.r2.cloudflarestorage.com/my-media/ffedge/tsk_0123456789abcdef01234567/out.mp4", attempts: 1 },
  });
export type OutputDestination = z.infer<typeof OutputDestinationSchema>;

/** POST /v1/tasks/{task_id}/deliveries/retry: the outputs given fresh attempts. */
export const RedeliveryResultSchema = z
  .object({
    task_id: z.string(),
    queued: z
      .array(z.object({ filename: z.string(), destination: OutputDestinationSchema }))
      .min(1)
      .meta({ description: "Each output whose failed delivery starts again: `pending`, its attempts counted from 0, to the destination as it is stored now" }),
    expired: z.array(z.string()).optional().meta({ description: "Outputs whose delivery failed too but whose copy here has expired: they cannot be delivered any more (absent when there are none)" }),
  })
  .meta({
    id: "Redelivery",
    example: { task_id: "tsk_0123456789abcdef01234567", queued: [{ filename: "out.mp4", destination: { id: "dst_0123456789abcdef01234567", status: "pending", key: "ffedge/tsk_0123456789abcdef01234567/out.mp4", attempts: 0 } }] },
  });
export type RedeliveryResult = z.infer<typeof RedeliveryResultSchema>;
