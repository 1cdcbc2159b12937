import { createRoute } from "@hono/zod-openapi";
import { MeSchema } from "../../shared/schemas/accounts";
import { requireApiKey, unauthorized } from "../accounts/credentials";
import { remainingSeconds, startOfUtcDay } from "../accounts/usage";
import { accountStatement } from "../accounts/users";
import { base64BodyLimit } from "../files/data-uri";
import { storedBytesStatement } from "../files/records";
import { config } from "../lib/config";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";
import { dispatchLineStub } from "../lib/stubs";
import { processedSecondsStatement, reservedSecondsStatement, tasksCreatedSinceStatement } from "../tasks/repository";

/** `GET /v1/me`: FFHub's clients call it to check that a key works; it also reports usage. */
export const me = createApp();

me.use("/v1/me", requireApiKey);
me.openapi(
  createRoute({
    method: "get", path: "/v1/me", tags: ["Account"], summary: "The account the API key belongs to, and its usage", security: bearerSecurity,
    description:
      "`remaining_credits` (FFHub's field) is the processing time left today: DAILY_TASK_SECONDS minus the seconds of tasks that finished since 00:00 UTC, minus the time limits that unfinished tasks hold. A new task may run for at most that long (and TASK_TIMEOUT_SECONDS); below 1 s, submissions answer 429 QUOTA_EXCEEDED.\n\n" +
      "`limits` are the upload limits of this deployment. Cloudflare refuses request bodies over its plan's limit with its own 413 before the service runs: 100 MB on Free and Pro, 200 MB on Business, 500 MB on Enterprise (https://developers.cloudflare.com/workers/platform/limits/#request-limits); `max_request_body_bytes` is set to that limit in production. Above it, use a presigned PUT (POST /v1/uploads/sign) or tus (/api/upload/tus), which reach `max_upload_bytes` on every plan; URL uploads send only a small JSON body and reach it too.",
    responses: { 200: { description: "The account", content: { "application/json": { schema: MeSchema } } }, 401: problemResponses[401] },
  }),
  async (c) => {
    const userId = c.get("userId");
    const now = new Date();
    const startOfDay = startOfUtcDay(now);
    const db = c.env.DB;
    const settings = config(c.env);
    const [user, tasks, seconds, reserved, bytes] = await db.batch([
      accountStatement(db, userId),
      tasksCreatedSinceStatement(db, userId, startOfDay),
      processedSecondsStatement(db, userId, startOfDay),
      reservedSecondsStatement(db, userId, settings.taskTimeoutSeconds),
      storedBytesStatement(db, userId, now),
    ]);
    const account = user!.results[0] as { id: string; name: string; email: string | null; created_at: string } | undefined;
    if (!account) throw unauthorized();
    const value = (result: D1Result | undefined) => Number((result?.results[0] as { value: number } | undefined)?.value ?? 0);
    const slots = await dispatchLineStub(c.env, userId).usage();
    return c.json({
      user_id: account.id,
      name: account.name,
      email: account.email,
      remaining_credits: remainingSeconds(settings.dailyTaskSeconds, value(seconds) + value(reserved)),
      created_at: account.created_at,
      usage: {
        tasks_today: value(tasks),
        seconds_processed_today: Math.round(value(seconds) * 100) / 100,
        bytes_stored: value(bytes),
        running_tasks: slots.running,
        waiting_tasks: slots.waiting,
        max_running_tasks: slots.cap,
        rate_limit: { requests: settings.rateLimit.requests, period_seconds: settings.rateLimit.periodSeconds },
      },
      limits: {
        max_upload_bytes: settings.maxUploadBytes,
        max_request_body_bytes: settings.maxRequestBodyBytes,
        max_base64_body_bytes: base64BodyLimit(settings),
      },
    }, 200);
  },
);
