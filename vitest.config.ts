import { defineConfig } from "vitest/config";
import { SlowFirstSequencer } from "./test/support/slow-first.js";

// Test tier by file suffix: *.unit.test.ts, *.int.test.ts (real PostgreSQL / NATS / SQLite files,
// child processes), *.e2e.test.ts (the shop over HTTP).
export default defineConfig({
  // `import … from "oncely"` (the examples) resolves to the sources through tsconfig.json "paths".
  resolve: { tsconfigPaths: true },
  test: {
    projects: [
      { extends: true, test: { name: "unit", include: ["**/*.unit.test.ts"], exclude: ["node_modules/**"] } },
      {
        extends: true,
        test: {
          name: "int",
          include: ["**/*.int.test.ts"],
          exclude: ["node_modules/**"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["**/*.e2e.test.ts"],
          exclude: ["node_modules/**"],
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
    ],
    testTimeout: 30_000,
    // The library's default logger writes warnings to stderr; tests silence it explicitly, and a
    // test of that default clears this for the process it starts.
    env: { ONCELY_LOG_LEVEL: "silent" },
    pool: "forks",
    // Most int and e2e files wait on PostgreSQL, NATS, child processes and timers rather than on
    // this process's CPU; vitest's default on 2 cores is one worker at a time.
    maxWorkers: 2,
    // The longest files start first, so that they overlap with the short ones (see the sequencer).
    sequence: { sequencer: SlowFirstSequencer },
  },
});
