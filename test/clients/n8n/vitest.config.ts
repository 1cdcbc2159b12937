import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * `npm run test:n8n`: the n8n nodes against the real local stack. n8n-workflow and n8n-core are
 * the package's own dev dependencies (clients/n8n-nodes-ffedge/node_modules, not the root's), so
 * the tests resolve them from there, to the CommonJS entries n8n-core itself requires: one copy of
 * each, shared by the tests, n8n-core and the package's dist/.
 */
const root = resolve(import.meta.dirname, "../../..");
const fromPackage = createRequire(join(root, "clients/n8n-nodes-ffedge/package.json"));

/** The CommonJS entry of a dev dependency of the package; the bare name until it is installed (knip reads this file on any machine). */
function installed(name: string): string {
  try {
    return fromPackage.resolve(name);
  } catch {
    return name;
  }
}

export default defineConfig({
  root,
  resolve: { alias: { "n8n-workflow": installed("n8n-workflow"), "n8n-core": installed("n8n-core") } },
  test: {
    include: ["test/clients/n8n/**/*.test.ts"],
    globalSetup: ["test/clients/n8n/build-package.ts"],
    // n8n-core's InstanceSettings keeps its config (an encryption key) in the user folder.
    env: { N8N_USER_FOLDER: join(tmpdir(), "ffedge-n8n-user") },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
