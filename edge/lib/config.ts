/** Typed view of the string vars in wrangler.toml, with the defaults the service documents. */
export function config(env: Env) {
  return {
    production: env.ENVIRONMENT === "production",
    publicUrl: trimSlash(env.PUBLIC_URL),
    cnPublicUrl: trimSlash(env.CN_PUBLIC_URL || env.PUBLIC_URL),
    edgeUrl: trimSlash(env.EDGE_URL),
    fileTtlSeconds: positiveInt(env.FILE_TTL_SECONDS, 86_400),
    maxUploadBytes: positiveInt(env.MAX_UPLOAD_BYTES, 1024 ** 3),
    taskTimeoutSeconds: positiveInt(env.TASK_TIMEOUT_SECONDS, 600),
    /** A running task whose transcoder has not reported for this long is failed (it heartbeats every 10 s). */
    heartbeatTimeoutSeconds: positiveInt(env.HEARTBEAT_TIMEOUT_SECONDS, 60),
    /** One webhook attempt may take this long; never more than 15 s, whatever the var says. */
    webhookTimeoutSeconds: Math.min(15, positiveInt(env.WEBHOOK_TIMEOUT_SECONDS, 15)),
    /** Delay before each webhook retry; the last one repeats until 24 h have passed since the first attempt. */
    webhookRetryScheduleSeconds: positiveIntList(env.WEBHOOK_RETRY_SCHEDULE_SECONDS, [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800]),
    maxRunningTasksPerUser: positiveInt(env.MAX_RUNNING_TASKS_PER_USER, 5),
    /** Hosts the guarded fetcher may reach although private: never honoured in production. */
    devFetchAllowHosts:
      env.ENVIRONMENT === "production"
        ? []
        : (env.DEV_FETCH_ALLOW_HOSTS ?? "").split(",").map((host) => host.trim().toLowerCase()).filter(Boolean),
  };
}

function positiveInt(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) && parsed > 0 ? parsed : fallback;
}

function positiveIntList(value: string | undefined, fallback: number[]): number[] {
  const parsed = (value ?? "").split(",").map((item) => Number(item.trim()));
  return parsed.length > 0 && parsed.every((item) => Number.isSafeInteger(item) && item > 0) ? parsed : fallback;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
