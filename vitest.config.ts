import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  return {
    test: {
      projects: [
        {
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
          // Pure edge modules are tested in node, without workerd.
          test: { name: "edge", include: ["test/edge/**/*.test.ts"], exclude: ["test/edge/tasks/state.test.ts"], setupFiles: ["./test/edge/setup.ts"], globalSetup: ["./test/helpers/origin-server.ts", "./test/helpers/s3-server.ts"], testTimeout: 30_000, hookTimeout: 30_000 },
        },
        {
          test: { name: "node", include: ["test/edge/tasks/state.test.ts", "test/shared/**/*.test.ts", "test/config/**/*.test.ts", "test/transcoder/**/*.test.ts", "test/scripts/**/*.test.ts", "test/structure/**/*.test.ts", "test/e2e/**/*.test.ts", "test/clients/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 },
        },
      ],
    },
  };
});
