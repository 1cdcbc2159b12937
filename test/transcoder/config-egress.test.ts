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
