import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../../edge/index";
import { config, configProblems } from "../../../edge/lib/config";
import { AppError } from "../../../shared/errors";
import { expectProblem } from "../../helpers/problems";
import { productionEnv } from "../helpers";

/** The test Worker's env with some vars replaced; `undefined` removes one. A new object, so it is parsed on its own. */
function withVars(vars: Record<string, string | undefined>): Env {
  return { ...env, ...vars } as unknown as Env;
}

/** What `read` throws: the settings are read where a request, the queue or an alarm first needs them. */
function thrownBy(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    return error;
  }
  return "nothing thrown";
}

const REFUSAL = expect.objectContaining({ code: "CONFIG_INVALID", status: 500 });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a var that does not parse", () => {
  it.each([
    ["ENVIRONMENT", "prod"],
    ["PUBLIC_URL", "cdn.ffedge-user.net"],
    ["CN_PUBLIC_URL", "ftp://cdn.ffedge-user.cn"],
    ["EDGE_URL", "not a url"],
    ["TRANSCODER_URL", "http://127.0.0.1:8788,localhost:8789"],
    ["FILE_TTL_SECONDS", "1 day"],
    ["MAX_UPLOAD_BYTES", "12x"],
    ["MAX_REQUEST_BODY_BYTES", "NaN"],
    ["TASK_TIMEOUT_SECONDS", "0"],
    ["HEARTBEAT_TIMEOUT_SECONDS", "-5"],
    ["WEBHOOK_TIMEOUT_SECONDS", "1.5"],
    ["WEBHOOK_RETRY_SCHEDULE_SECONDS", "5,30,,120"],
    ["DESTINATION_RETRY_SCHEDULE_SECONDS", "30,0"],
    ["MAX_RUNNING_TASKS_PER_USER", "five"],
    ["RATE_LIMIT_REQUESTS", "1e400"],
    ["RATE_LIMIT_PERIOD_SECONDS", "60s"],
    ["URL_UPLOAD_IDLE_TIMEOUT_SECONDS", "30 s"],
    ["DAILY_TASK_SECONDS", "10h"],
    ["PUBLIC_TASK_STATUS", "yes"],
    ["SESSION_TTL_SECONDS", "14d"],
    ["CONTAINER_MAX_INSTANCES", "0"],
    ["WARM_CONTAINERS", "-1"],
  ])("%s=%j is refused with CONFIG_INVALID at every read, logged once naming the setting, instead of becoming the default", (setting, value) => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const target = withVars({ [setting]: value });
    expect(configProblems(target)).toEqual([{ setting, problem: expect.stringMatching(/^must /) }]);
    expect(thrownBy(() => config(target))).toBeInstanceOf(AppError);
    expect([thrownBy(() => config(target)), thrownBy(() => config(target))]).toEqual([REFUSAL, REFUSAL]);
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    expect(lines).toEqual([{ msg: "configuration invalid", setting, problem: expect.stringMatching(/^must /) }]);
  });

  it("names every malformed setting at once", () => {
    expect(configProblems(withVars({ MAX_UPLOAD_BYTES: "12x", PUBLIC_TASK_STATUS: "no" })).map((problem) => problem.setting).sort()).toEqual(["MAX_UPLOAD_BYTES", "PUBLIC_TASK_STATUS"]);
  });

  it("makes the Worker answer every request 500 CONFIG_INVALID without naming the setting to the client", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const target = withVars({ MAX_REQUEST_BODY_BYTES: "100MB" });
    for (const path of ["/openapi.json", "/v1/me"]) {
      const ctx = createExecutionContext();
      const response = await worker.fetch(new Request(`http://localhost:8787${path}`), target, ctx);
      await waitOnExecutionContext(ctx);
      const body = await expectProblem(response, 500, "CONFIG_INVALID");
      expect(String(body.detail)).not.toContain("MAX_REQUEST_BODY_BYTES");
    }
  });

  it("in production, reports malformed values first, then what production lacks", () => {
    expect(configProblems(productionEnv({ MAX_UPLOAD_BYTES: "12x", SIGNING_SECRET: "dev" }))).toEqual([{ setting: "MAX_UPLOAD_BYTES", problem: expect.any(String) }]);
    expect(configProblems(productionEnv({ SIGNING_SECRET: "dev" })).map((problem) => problem.setting)).toEqual(["SIGNING_SECRET"]);
  });
});

describe("well-formed vars", () => {
  it("parse into the typed settings", () => {
    const settings = config(
      withVars({
        PUBLIC_URL: "https://cdn.ffedge-user.net/",
        CN_PUBLIC_URL: "https://cdn.ffedge-user.cn//",
        EDGE_URL: "https://api.ffedge.net",
        TRANSCODER_URL: "http://10.0.0.1:8788/, http://10.0.0.2:8788",
        MAX_UPLOAD_BYTES: "5000",
        MAX_REQUEST_BODY_BYTES: "104857600",
        WEBHOOK_TIMEOUT_SECONDS: "120",
        WEBHOOK_RETRY_SCHEDULE_SECONDS: " 1, 2 ,3",
        DESTINATION_RETRY_SCHEDULE_SECONDS: "1,1",
        RATE_LIMIT_REQUESTS: "300",
        RATE_LIMIT_PERIOD_SECONDS: "10",
        PUBLIC_TASK_STATUS: "false",
        WARM_CONTAINERS: "0",
        DEV_FETCH_ALLOW_HOSTS: " 127.0.0.1, Media.Test ,",
      }),
    );
    expect(settings).toMatchObject({
      production: false,
      publicUrl: "https://cdn.ffedge-user.net",
      cnPublicUrl: "https://cdn.ffedge-user.cn",
      edgeUrl: "https://api.ffedge.net",
      transcoderUrls: ["http://10.0.0.1:8788", "http://10.0.0.2:8788"],
      maxUploadBytes: 5000,
      maxRequestBodyBytes: 104_857_600,
      webhookTimeoutSeconds: 15,
      webhookRetryScheduleSeconds: [1, 2, 3],
      destinationRetryScheduleSeconds: [1, 1],
      rateLimit: { requests: 300, periodSeconds: 10 },
      publicTaskStatus: false,
      warmContainers: 0,
      devFetchAllowHosts: ["127.0.0.1", "media.test"],
    });
  });

  it("take the documented defaults when unset or empty, the China URL that of the CDN", () => {
    const unset = [
      "CN_PUBLIC_URL",
      "FILE_TTL_SECONDS",
      "MAX_UPLOAD_BYTES",
      "TASK_TIMEOUT_SECONDS",
      "HEARTBEAT_TIMEOUT_SECONDS",
      "WEBHOOK_TIMEOUT_SECONDS",
      "MAX_RUNNING_TASKS_PER_USER",
      "RATE_LIMIT_REQUESTS",
      "RATE_LIMIT_PERIOD_SECONDS",
      "DAILY_TASK_SECONDS",
      "SESSION_TTL_SECONDS",
      "CONTAINER_MAX_INSTANCES",
      "DEV_FETCH_ALLOW_HOSTS",
    ];
    const empty = ["WEBHOOK_RETRY_SCHEDULE_SECONDS", "PUBLIC_TASK_STATUS", "WARM_CONTAINERS", "MAX_REQUEST_BODY_BYTES", "URL_UPLOAD_IDLE_TIMEOUT_SECONDS", "TRANSCODER_URL", "ENVIRONMENT"];
    const vars = { ...Object.fromEntries(unset.map((name) => [name, undefined])), ...Object.fromEntries(empty.map((name) => [name, " "])), PUBLIC_URL: "http://localhost:8787/" };
    expect(config(withVars(vars))).toEqual({
      production: false,
      publicUrl: "http://localhost:8787",
      cnPublicUrl: "http://localhost:8787",
      edgeUrl: env.EDGE_URL,
      transcoderUrls: [],
      fileTtlSeconds: 86_400,
      maxUploadBytes: 1024 ** 3,
      maxRequestBodyBytes: 1024 ** 3 + 64 * 1024,
      taskTimeoutSeconds: 600,
      heartbeatTimeoutSeconds: 60,
      webhookTimeoutSeconds: 15,
      webhookRetryScheduleSeconds: [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800],
      destinationRetryScheduleSeconds: [30, 120, 600, 1800],
      maxRunningTasksPerUser: 5,
      rateLimit: { requests: 1200, periodSeconds: 60 },
      urlUploadIdleTimeoutSeconds: 30,
      dailyTaskSeconds: 36_000,
      publicTaskStatus: true,
      sessionTtlSeconds: 14 * 24 * 60 * 60,
      containerMaxInstances: 20,
      warmContainers: 0,
      devFetchAllowHosts: [],
    });
  });

  it("leave a production Worker's settings readable although it lacks production secrets: only requests are refused", () => {
    const settings = config(withVars({ ENVIRONMENT: "production", DEV_FETCH_ALLOW_HOSTS: "127.0.0.1" }));
    expect(settings.production).toBe(true);
    expect(settings.devFetchAllowHosts).toEqual([]);
  });
});

describe("parsing once", () => {
  it("answers the same object for the same env, a separate one for another env", () => {
    expect(config(env)).toBe(config(env));
    const other = withVars({});
    expect(config(other)).toBe(config(other));
    expect(config(other)).not.toBe(config(env));
    expect(config(other)).toEqual(config(env));
  });

  it("does not read the env object again: a value changed after the first read is not seen", () => {
    const target = withVars({ MAX_UPLOAD_BYTES: "5000" });
    expect(config(target).maxUploadBytes).toBe(5000);
    (target as unknown as Record<string, string>).MAX_UPLOAD_BYTES = "6000";
    expect(config(target).maxUploadBytes).toBe(5000);
  });

  it("keeps a refusal too: a value fixed after the first read is not seen either", () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const target = withVars({ SESSION_TTL_SECONDS: "a fortnight" });
    expect(thrownBy(() => config(target))).toEqual(REFUSAL);
    (target as unknown as Record<string, string>).SESSION_TTL_SECONDS = "1209600";
    expect(thrownBy(() => config(target))).toEqual(REFUSAL);
  });

  it("hands out settings no caller can change for the requests after it", () => {
    const settings = config(env);
    expect(Object.isFrozen(settings)).toBe(true);
    expect(() => (settings.devFetchAllowHosts as string[]).push("evil.example")).toThrow(TypeError);
    expect(() => (settings.webhookRetryScheduleSeconds as number[]).push(1)).toThrow(TypeError);
  });
});
