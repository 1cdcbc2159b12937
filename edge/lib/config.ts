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

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
