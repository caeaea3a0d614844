import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const fixture = join(import.meta.dirname, "fixtures/unserved-effect.ts");

/** Run the fixture in its own process with `ONCELY_LOG_LEVEL` as given (unset when undefined). */
function runFixture(level: string | undefined) {
  const env = { ...process.env };
  delete env.ONCELY_LOG_LEVEL; // vitest.config.ts sets it to silent for the tests
  if (level !== undefined) env.ONCELY_LOG_LEVEL = level;
  const child = spawnSync(process.execPath, ["--import", "tsx", fixture], { env, encoding: "utf8" });
  expect(child.status, child.stderr).toBe(0);
  return child.stderr.split("\n").filter((line) => line.startsWith("{"));
}

describe("the default logger of a component built without one", () => {
  it("writes warnings to stderr as JSON lines", () => {
    const lines = runFixture(undefined);
    const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string; kind?: string });
    expect(warnings).toContainEqual(
      expect.objectContaining({
        level: 40, // pino's warn
        kind: "audit",
        msg: expect.stringContaining('no handler registered for effect kind "audit"'),
      }),
    );
  });

  it("is silenced by ONCELY_LOG_LEVEL=silent", () => {
    expect(runFixture("silent")).toEqual([]);
  });
});
