import { defineConfig } from "vitest/config";

/**
 * `npm run test:container`: the production topology (Docker, the real image, `wrangler dev`
 * with Containers). Not part of `npm test`: it needs Docker and takes minutes.
 */
export default defineConfig({
  test: {
    name: "container",
    root: ".",
    include: ["test/container/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 600_000,
  },
});
