import { type D1Migration, applyD1Migrations, env } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}

// Runs before every test file. Files of a worker share one D1 (`isolate: false` in vitest.config.ts),
// and applyD1Migrations skips what its d1_migrations table records, so only a worker's first file migrates.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
