import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SLOW_FIRST, slowFirst } from "../support/slow-first.js";

const ROOT = join(import.meta.dirname, "..", "..");

describe("the slow-first test order", () => {
  it("moves the listed files to the front in the list's order, keeping every other file and its order", () => {
    const files = ["a.unit.test.ts", "slow-2.int.test.ts", "b.unit.test.ts", "slow-1.e2e.test.ts", "c.int.test.ts"].map(
      (name) => ({ moduleId: join("/repo", name) }),
    );
    const sorted = slowFirst(files, "/repo", ["slow-1.e2e.test.ts", "slow-2.int.test.ts", "absent.int.test.ts"]);
    expect(sorted.map((f) => f.moduleId.slice("/repo/".length))).toEqual([
      "slow-1.e2e.test.ts",
      "slow-2.int.test.ts",
      "a.unit.test.ts",
      "b.unit.test.ts",
      "c.int.test.ts",
    ]);
  });

  it("names only test files that exist, each once", () => {
    expect(SLOW_FIRST.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
    expect(new Set(SLOW_FIRST).size).toBe(SLOW_FIRST.length);
    for (const path of SLOW_FIRST) expect(path).toMatch(/\.(unit|int|e2e)\.test\.ts$/);
  });
});
