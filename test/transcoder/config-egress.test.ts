import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../transcoder/config";

let dir: string;
let ca: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ffedge-ca-"));
  ca = path.join(dir, "cloudflare-containers-ca.crt");
  await writeFile(ca, "-----BEGIN CERTIFICATE-----\n");
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe("loadConfig: EGRESS", () => {
  it("checks addresses itself unless told it runs in a container", () => {
    expect(loadConfig({ TRANSCODER_SECRET: "s" }).egress).toBe("direct");
  });

  it("accepts container egress when the platform's CA certificate is there to trust", () => {
    expect(loadConfig({ TRANSCODER_SECRET: "s", EGRESS: "container", NODE_EXTRA_CA_CERTS: ca }).egress).toBe("container");
  });

  it.each([
    ["without NODE_EXTRA_CA_CERTS", {}],
    ["with a CA file that does not exist", { NODE_EXTRA_CA_CERTS: path.join(os.tmpdir(), "no-such-ca.crt") }],
  ])("refuses container egress %s, naming EGRESS", (_name, extra) => {
    const attempt = () => loadConfig({ TRANSCODER_SECRET: "s", EGRESS: "container", ...extra });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/EGRESS: EGRESS=container needs NODE_EXTRA_CA_CERTS/);
  });

  it("refuses an unknown egress mode", () => {
    expect(() => loadConfig({ TRANSCODER_SECRET: "s", EGRESS: "none" })).toThrow(/EGRESS/);
  });
});

describe("loadConfig: SANDBOX_ALLOW_MISSING", () => {
  const container = () => ({ TRANSCODER_SECRET: "s", EGRESS: "container", NODE_EXTRA_CA_CERTS: ca });

  it("allows no missing layer unless told", () => {
    expect(loadConfig(container()).sandboxAllowMissing).toEqual([]);
  });

  it("reads the exact layers named, comma-separated", () => {
    expect(loadConfig({ ...container(), SANDBOX_ALLOW_MISSING: " network_namespace, job_root " }).sandboxAllowMissing).toEqual(["network_namespace", "job_root"]);
  });

  it("refuses a name that is not a layer, naming the layers it knows", () => {
    const attempt = () => loadConfig({ ...container(), SANDBOX_ALLOW_MISSING: "network_namespace,all" });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/'all', which is not an isolation layer \(network_namespace, unprivileged_uid, per_job_uid, job_root, rlimits\)/);
  });

  it("refuses an allowance outside a container, where it would change nothing", () => {
    expect(() => loadConfig({ TRANSCODER_SECRET: "s", SANDBOX_ALLOW_MISSING: "network_namespace" })).toThrow(/SANDBOX_ALLOW_MISSING: SANDBOX_ALLOW_MISSING applies only with EGRESS=container/);
  });
});

describe("loadConfig: SHUTDOWN_GRACE_SECONDS", () => {
  it("takes the longest grace a Container allows after SIGTERM (870 s)", () => {
    expect(loadConfig({ TRANSCODER_SECRET: "s", SHUTDOWN_GRACE_SECONDS: "870" }).shutdownGraceSeconds).toBe(870);
  });

  it("refuses a grace longer than a timer can wait", () => {
    expect(() => loadConfig({ TRANSCODER_SECRET: "s", SHUTDOWN_GRACE_SECONDS: String(3 * 10 ** 6) })).toThrow(/SHUTDOWN_GRACE_SECONDS/);
  });
});
