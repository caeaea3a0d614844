import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const fixture = join(import.meta.dirname, "fixtures/failing-gap-check.ts");

describe("a host built without a logger", () => {
  it("writes its own warnings (a failed gap check) to stderr", () => {
    const env = { ...process.env };
    delete env.ONCELY_LOG_LEVEL; // vitest.config.ts sets it to silent for the tests
    const child = spawnSync(process.execPath, ["--import", "tsx", fixture], { env, encoding: "utf8" });
    expect(child.status, child.stderr).toBe(0);
    const lines = child.stderr.split("\n").filter((line) => line.startsWith("{"));
    const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string; consumer?: string });
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 50, consumer: "ticks", msg: expect.stringContaining("gap check failed") }),
    );
  });
});
