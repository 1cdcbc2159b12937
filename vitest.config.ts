import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { readD1Migrations } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Projects "edge" and "node" are the inner loop (`npm run test:unit`): nothing
 * in them starts the local stack, a browser, `npm pack`, wrangler or a type check of the tree.
 * `npm test` runs every project, so each test still runs exactly once there.
 */

/** Workerd tests that spend seconds on purpose: scrypt sign-ins, 110 MB streams, idle and revocation windows. */
const SLOW_EDGE_TESTS = [
  "test/edge/console-api/auth.test.ts",
  "test/edge/console-api/event-streams.test.ts",
  "test/edge/lib/idempotency.test.ts",
  "test/edge/files/stream-store.test.ts",
  "test/edge/accounts/signin-limits.test.ts",
];

/** Node tests that start the local stack, `npm start`, a browser, `npm pack`, wrangler's processes, or tsc and knip over the tree. */
const INTEGRATION_TESTS = [
  "test/e2e/**/*.test.ts",
  "test/clients/cli/**/*.test.ts",
  "test/clients/sdk/{openapi-drift,pack,run,uploads}.test.ts",
  "test/scripts/{keys,keys-busy,keys-users,start,start-log}.test.ts",
  "test/structure/{imports,typecheck}.test.ts",
];

/** Pure edge modules are tested in node, without workerd. */
const EDGE_IN_NODE = ["test/edge/tasks/state.test.ts"];

export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  const inWorkerd = (name: string, include: string[], exclude: string[]) => ({
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
    test: { name, include, exclude, setupFiles: ["./test/edge/setup.ts"], globalSetup: ["./test/helpers/origin-server.ts", "./test/helpers/s3-server.ts"], testTimeout: 30_000, hookTimeout: 30_000 },
  });
  const inNode = (name: string, include: string[], exclude: string[]) => ({
    test: { name, include, exclude: [...configDefaults.exclude, ...exclude], testTimeout: 60_000, hookTimeout: 60_000 },
  });
  return {
    test: {
      projects: [
        inWorkerd("edge", ["test/edge/**/*.test.ts"], [...EDGE_IN_NODE, ...SLOW_EDGE_TESTS]),
        inNode("node", [...EDGE_IN_NODE, "test/shared/**/*.test.ts", "test/config/**/*.test.ts", "test/transcoder/**/*.test.ts", "test/scripts/**/*.test.ts", "test/structure/**/*.test.ts", "test/clients/**/*.test.ts"], INTEGRATION_TESTS),
        inWorkerd("edge-slow", SLOW_EDGE_TESTS, []),
        inNode("integration", INTEGRATION_TESTS, []),
      ],
    },
  };
});
