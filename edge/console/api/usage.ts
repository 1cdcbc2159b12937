import { createRoute } from "@hono/zod-openapi";
import { DailyUsageSchema, UsageQuerySchema } from "../../../shared/schemas/accounts";
import { dailyQuota, dailyUsage } from "../../accounts/usage";
import { requireSession } from "./guards";
import { config } from "../../lib/config";
import { createApp } from "../../lib/openapi";
import { dispatchLineStub } from "../../lib/stubs";
import { problems } from "./routes";

/** Tasks and processing seconds per day, storage in use, and the limits they count against. */
export const usage = createApp();
usage.use("/console/api/usage", requireSession);

usage.openapi(
  createRoute({ method: "get", path: "/console/api/usage", hide: true, request: { query: UsageQuerySchema }, responses: { 200: { description: "Usage", content: { "application/json": { schema: DailyUsageSchema } } }, ...problems } }),
  async (c) => {
    const userId = c.get("userId");
    const settings = config(c.env);
    const [days, quota, stored, slots] = await Promise.all([
      dailyUsage(c.env.DB, userId, c.req.valid("query").days),
      dailyQuota(c.env.DB, userId, settings),
      c.env.DB.prepare("SELECT COALESCE(SUM(size), 0) AS value FROM files WHERE user_id = ? AND expires_at > ?").bind(userId, new Date().toISOString()).first<{ value: number }>(),
      dispatchLineStub(c.env, userId).usage(),
    ]);
    return c.json({
      days,
      storage_bytes: Number(stored?.value ?? 0),
      running_tasks: slots.running,
      waiting_tasks: slots.waiting,
      daily_quota: quota,
      limits: {
        max_running_tasks: slots.cap,
        rate_limit: { requests: Number(c.env.RATE_LIMIT_REQUESTS) || 1200, period_seconds: Number(c.env.RATE_LIMIT_PERIOD_SECONDS) || 60 },
        max_upload_bytes: settings.maxUploadBytes,
        task_timeout_seconds: settings.taskTimeoutSeconds,
        file_ttl_seconds: settings.fileTtlSeconds,
        daily_task_seconds: settings.dailyTaskSeconds,
      },
    }, 200);
  },
);
