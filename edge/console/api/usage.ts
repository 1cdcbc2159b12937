import { createRoute } from "@hono/zod-openapi";
import { DailyUsageSchema, UsageQuerySchema } from "../../../shared/schemas/accounts";
import { dailyQuota, dailyUsage, startOfUtcDay, usageWindowStart } from "../../accounts/usage";
import { storedBytes } from "../../files/records";
import { requireSession } from "./guards";
import { config } from "../../lib/config";
import { createApp } from "../../lib/openapi";
import { dispatchLineStub } from "../../lib/stubs";
import { dailyTaskTotals, quotaSeconds } from "../../tasks/repository";
import { problems } from "./routes";

/** Tasks and processing seconds per day, storage in use, and the limits they count against. */
export const usage = createApp();
usage.use("/console/api/usage", requireSession);

usage.openapi(
  createRoute({ method: "get", path: "/console/api/usage", hide: true, request: { query: UsageQuerySchema }, responses: { 200: { description: "Usage", content: { "application/json": { schema: DailyUsageSchema } } }, ...problems } }),
  async (c) => {
    const userId = c.get("userId");
    const settings = config(c.env);
    const { days } = c.req.valid("query");
    const now = new Date();
    const [totals, used, stored, slots] = await Promise.all([
      dailyTaskTotals(c.env.DB, userId, usageWindowStart(days, now)),
      quotaSeconds(c.env.DB, userId, startOfUtcDay(now), settings.taskTimeoutSeconds),
      storedBytes(c.env.DB, userId, now),
      dispatchLineStub(c.env, userId).usage(),
    ]);
    return c.json({
      days: dailyUsage(totals, days, now),
      storage_bytes: stored,
      running_tasks: slots.running,
      waiting_tasks: slots.waiting,
      daily_quota: dailyQuota(used, settings.dailyTaskSeconds, now),
      limits: {
        max_running_tasks: slots.cap,
        rate_limit: { requests: settings.rateLimit.requests, period_seconds: settings.rateLimit.periodSeconds },
        max_upload_bytes: settings.maxUploadBytes,
        task_timeout_seconds: settings.taskTimeoutSeconds,
        file_ttl_seconds: settings.fileTtlSeconds,
        daily_task_seconds: settings.dailyTaskSeconds,
      },
    }, 200);
  },
);
