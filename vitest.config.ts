import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // Node (and so the server in production) loads graphql's CommonJS build, as do the libraries vitest leaves
  // external (graphql-ws, envelop); without this alias vite gives our sources the ESM build, a second copy
  // whose GraphQLError fails those libraries' instanceof checks.
  resolve: { alias: { graphql: createRequire(import.meta.url).resolve("graphql") } },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/build-once.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // The files of a worker share one module graph: what they import loads once per worker, not once per file
    // (loading was a third of the suite's time; the server itself is the bundle, test/support/bundle.ts). Safe
    // because tests are black-box — no mocks, no module state they change — and every test server has its own
    // context, database and port window.
    isolate: false,
  },
});
