import { execFileSync } from "node:child_process";
import { copyFileSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// n8n loads a community package with require(): CommonJS from tsc, plus each node's icon beside its .js.
const root = dirname(fileURLToPath(import.meta.url));
const tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc");
rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.json")], { stdio: "inherit" });
for (const node of readdirSync(join(root, "nodes"), { withFileTypes: true })) {
  if (!node.isDirectory()) continue;
  for (const file of readdirSync(join(root, "nodes", node.name)).filter((name) => name.endsWith(".svg"))) {
    copyFileSync(join(root, "nodes", node.name, file), join(root, "dist", "nodes", node.name, file));
  }
}
console.log("clients/n8n-nodes-ffedge/dist built");
