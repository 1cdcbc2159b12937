import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PACKAGE_DIR, loader } from "./n8n-host";

describe("the n8n-nodes-ffedge package", () => {
  it("is loaded by n8n-core's package loader: both nodes, the credential, its supported nodes and the icons", () => {
    expect(loader.packageName).toBe("n8n-nodes-ffedge");
    expect(loader.types.nodes.map((node) => node.name).sort()).toEqual(["ffedge", "ffedgeTrigger"]);
    expect(loader.types.credentials.map((credential) => credential.name)).toEqual(["ffedgeApi"]);
    expect(loader.known.credentials.ffedgeApi!.supportedNodes?.sort()).toEqual(["ffedge", "ffedgeTrigger"]);
    for (const description of [...loader.types.nodes, ...loader.types.credentials]) {
      const iconUrl = String(description.iconUrl);
      expect(iconUrl).toMatch(/^icons\/n8n-nodes-ffedge\/dist\/.+\.svg$/);
      expect(existsSync(join(PACKAGE_DIR, iconUrl.replace("icons/n8n-nodes-ffedge/", "")))).toBe(true);
    }
    expect(loader.types.nodes.find((node) => node.name === "ffedge")!.__loadOptionsMethods).toEqual(["getPresets"]);
  });

  it("packs dist/ and the README, and nothing else of the source tree", async () => {
    const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: PACKAGE_DIR });
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as { n8n: { nodes: string[]; credentials: string[] } };
    expect(files).toEqual(expect.arrayContaining(["README.md", "package.json", ...manifest.n8n.nodes, ...manifest.n8n.credentials, "dist/nodes/FFedge/ffedge.svg"]));
    expect(files.filter((path) => !path.startsWith("dist/") && !["README.md", "package.json"].includes(path))).toEqual([]);
    expect(files.some((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))).toBe(false);
  });

  it("type-checks, and so do these tests' calls into n8n-workflow and n8n-core", { timeout: 120_000 }, async () => {
    const tsc = resolve(import.meta.dirname, "../../../node_modules/typescript/bin/tsc");
    for (const project of [join(PACKAGE_DIR, "tsconfig.json"), join(import.meta.dirname, "tsconfig.json")]) {
      const output = await promisify(execFile)(process.execPath, [tsc, "--noEmit", "-p", project]).then(
        () => "",
        (error: { stdout?: string; message: string }) => error.stdout || error.message,
      );
      expect(output).toBe("");
    }
  });
});
