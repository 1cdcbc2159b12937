import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../transcoder/config";

describe("loadConfig", () => {
  it("needs only TRANSCODER_SECRET and documents its defaults", () => {
    const config = loadConfig({ TRANSCODER_SECRET: "s" });
    expect(config).toMatchObject({
      production: false,
      port: 8788,
      maxInputBytes: 1024 ** 3,
      maxJobSeconds: 600,
      sandbox: "auto",
      ffmpegPath: "ffmpeg",
      devFetchAllowHosts: [],
    });
    expect(config.maxConcurrentJobs).toBeGreaterThan(0);
    expect(config.workRoot).toMatch(/ffedge-jobs$/);
  });

  it("fails fast with every problem named", () => {
    const attempt = () => loadConfig({ PORT: "eighty", MAX_CONCURRENT_JOBS: "0", SANDBOX: "maybe", WORK_ROOT: "relative/dir" });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      for (const name of ["TRANSCODER_SECRET", "PORT", "MAX_CONCURRENT_JOBS", "SANDBOX", "WORK_ROOT"]) expect(message).toContain(name);
    }
  });

  it("reads the dev allow-list outside production and ignores it in production", () => {
    expect(loadConfig({ TRANSCODER_SECRET: "s", DEV_FETCH_ALLOW_HOSTS: " 127.0.0.1, Media.Test " }).devFetchAllowHosts).toEqual(["127.0.0.1", "media.test"]);
    const production = loadConfig({ NODE_ENV: "production", TRANSCODER_SECRET: "a-long-enough-secret", DEV_FETCH_ALLOW_HOSTS: "127.0.0.1" });
    expect(production.devFetchAllowHosts).toEqual([]);
  });

  it("demands a real secret in production", () => {
    expect(() => loadConfig({ NODE_ENV: "production", TRANSCODER_SECRET: "short" })).toThrow(/at least 16 characters/);
  });

  it("treats empty variables as unset", () => {
    expect(loadConfig({ TRANSCODER_SECRET: "s", PORT: "", MAX_OUTPUT_FILES: "" })).toMatchObject({ port: 8788, maxOutputFiles: 1000 });
  });
});
