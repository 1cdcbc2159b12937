import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { readD1Migrations } from "@cloudflare/vitest-plugin";
import { createRequire } from "node:module";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Projects "edge" and "node" are the inner loop (`npm run test:unit`, under a minute on two
 * cores): nothing in them starts the local stack, a browser, `npm pack`, wrangler or a type
 * check of the tree, and nothing waits seconds on purpose. `npm test` runs every project, so
 * each test still runs exactly once there.
 */

/**
 * Workerd tests that spend seconds on purpose (scrypt sign-ins, bodies past the 160 MiB upload
 * limit, idle and revocation windows), and the file sweep, whose counts assume no other file's
 * expired files.
 */
export const SLOW_EDGE_TESTS = [
  "test/edge/console-api/auth.test.ts",
  "test/edge/console-api/event-streams.test.ts",
  "test/edge/lib/idempotency.test.ts",
  "test/edge/files/stream-store.test.ts",
  "test/edge/accounts/signin-limits.test.ts",
  "test/edge/files/sweep.test.ts",
  "test/edge/routes/uploads-limits.test.ts",
];

/** Transcoder tests that run real ffmpeg jobs to their end or wait out real grace periods, stall windows and cooldowns. */
export const SLOW_NODE_TESTS = [
  "test/transcoder/server.test.ts",
  "test/transcoder/jobs/{shutdown,guard,job-run,workspace-full,still-picture,steps}.test.ts",
  "test/transcoder/routes/jobs.test.ts",
];

/** Node tests that start the local stack, `npm start`, a browser, `npm pack`, wrangler's processes, or tsc and knip over the tree. */
export const INTEGRATION_TESTS = [
  "test/e2e/**/*.test.ts",
  "test/clients/cli/**/*.test.ts",
  "test/clients/sdk/{openapi-drift,pack,run,uploads,workflows}.test.ts",
  "test/scripts/{keys,keys-busy,keys-users,start,start-log}.test.ts",
  "test/structure/{imports,typecheck}.test.ts",
];

/**
 * The n8n nodes against the real local stack. n8n-workflow and n8n-core are the package's own
 * dev dependencies (clients/n8n-nodes-ffedge/node_modules, installed by `npm run n8n:deps`
 * before `npm test`, not by the root install: 358 MB nobody else needs), so its tests resolve
 * them from there, to the CommonJS entries n8n-core itself requires: one copy of each, shared by
 * the tests, n8n-core and the package's dist/.
 */
const N8N_TESTS = ["test/clients/n8n/**/*.test.ts"];
const fromN8nPackage = createRequire(join(import.meta.dirname, "clients/n8n-nodes-ffedge/package.json"));

/** The CommonJS entry of one of the package's dev dependencies; the bare name until it is installed (knip reads this file on any machine). */
function n8nPackageEntry(name: string): string {
  try {
    return fromN8nPackage.resolve(name);
  } catch {
    return name;
  }
}

/** Pure edge modules are tested in node, without workerd. */
export const EDGE_IN_NODE = ["test/edge/tasks/state.test.ts"];

/**
 * The inner loop runs first and several files at a time: its tests mostly wait on sockets,
 * timers and child processes, so even two cores keep three files busy (Vitest's default of one
 * worker per core less one would run them one by one there). The other projects run after it
 * as before, with Vitest's default number of workers; projects that differ in `maxWorkers` need
 * their own `groupOrder` (https://vitest.dev/config/sequence#sequence-grouporder).
 *
 * Its files also share their worker's modules (`isolate: false`) instead of importing them
 * afresh: they restore what they change (environment variables, servers, child processes),
 * and in workerd this also means one workerd and one storage per worker instead of one per
 * file (https://developers.cloudflare.com/workers/testing/vitest-integration/isolation-and-concurrency/).
 * Edge tests make their own users, keys and objects, so they share that storage safely; a file
 * that needs a store or a process of its own runs in a later project, isolated.
 */
const INNER_LOOP = { isolate: false, maxWorkers: Math.max(3, availableParallelism()), sequence: { groupOrder: 0 } };
const AFTER_INNER_LOOP = { sequence: { groupOrder: 1 } };
type Scheduling = typeof INNER_LOOP | typeof AFTER_INNER_LOOP;

export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  const inWorkerd = (name: string, include: string[], exclude: string[], run: Scheduling) => ({
    plugins: [
      cloudflareTest({
        main: "./edge/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // A small window so the rate-limit test stays quick; every test uses fresh keys.
          ratelimits: { API_RATE_LIMIT: { namespace_id: "1001", simple: { limit: 200, period: 10 } } },
          bindings: {
            RATE_LIMIT_REQUESTS: "200",
            RATE_LIMIT_PERIOD_SECONDS: "10",
            TEST_MIGRATIONS: migrations,
            SIGNING_SECRET: "test-signing-secret",
            TRANSCODER_SECRET: "test-transcoder-secret",
            MAX_UPLOAD_BYTES: String(160 * 1024 * 1024),
            DEV_FETCH_ALLOW_HOSTS: "127.0.0.1",
            // Nothing listens there: edge tests see an unreachable transcoder; e2e tests run a real one.
            TRANSCODER_URL: "http://127.0.0.1:9",
          },
        },
      }),
    ],
    test: { name, include, exclude, ...run, setupFiles: ["./test/edge/setup.ts"], globalSetup: ["./test/helpers/console-bundle.ts", "./test/helpers/origin-server.ts", "./test/helpers/s3-server.ts"], testTimeout: 30_000, hookTimeout: 30_000 },
  });
  const inNode = (name: string, include: string[], exclude: string[], run: Scheduling) => ({
    test: { name, include, exclude: [...configDefaults.exclude, ...exclude], ...run, testTimeout: 60_000, hookTimeout: 60_000 },
  });
  return {
    test: {
      projects: [
        inWorkerd("edge", ["test/edge/**/*.test.ts"], [...EDGE_IN_NODE, ...SLOW_EDGE_TESTS], INNER_LOOP),
        inNode("node", [...EDGE_IN_NODE, "test/shared/**/*.test.ts", "test/config/**/*.test.ts", "test/transcoder/**/*.test.ts", "test/scripts/**/*.test.ts", "test/structure/**/*.test.ts", "test/clients/**/*.test.ts"], [...INTEGRATION_TESTS, ...SLOW_NODE_TESTS, ...N8N_TESTS], INNER_LOOP),
        inWorkerd("edge-slow", SLOW_EDGE_TESTS, [], AFTER_INNER_LOOP),
        inNode("node-slow", SLOW_NODE_TESTS, [], AFTER_INNER_LOOP),
        inNode("integration", INTEGRATION_TESTS, [], AFTER_INNER_LOOP),
        {
          resolve: { alias: { "n8n-workflow": n8nPackageEntry("n8n-workflow"), "n8n-core": n8nPackageEntry("n8n-core") } },
          test: {
            name: "n8n", include: N8N_TESTS, ...AFTER_INNER_LOOP, globalSetup: ["test/clients/n8n/build-package.ts"], testTimeout: 60_000, hookTimeout: 120_000,
            // n8n-core's InstanceSettings keeps its config (an encryption key) in the user folder.
            env: { N8N_USER_FOLDER: join(tmpdir(), "ffedge-n8n-user") },
          },
        },
      ],
    },
  };
});
