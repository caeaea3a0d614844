import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module without types (it runs as a Node module hook)
import { builtUrl } from "../../bench/built-package-hooks.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const url = (path: string) => pathToFileURL(join(ROOT, path)).href;

describe("the bench's oncely is the built package", () => {
  it("maps a source module to its build, and nothing else", () => {
    expect(builtUrl(url("src/core/runtime.ts"))).toBe(url("dist/core/runtime.js"));
    expect(builtUrl(url("src/index.ts"))).toBe(url("dist/index.js"));
    for (const other of ["bench/workflow.ts", "dist/index.js", "test/support/services.ts", "src/core/runtime.js"]) {
      expect(builtUrl(url(other))).toBe(url(other));
    }
    expect(builtUrl("node:fs")).toBe("node:fs");
  });

  it("loads dist/ in a process started with the hook, where tsx alone loads src/", () => {
    // A stack without source maps names the file each frame really ran from.
    const script = `process.setSourceMapsEnabled(false);
      const { assertStorableText } = await import("./src/base/storable-text.js");
      try { assertStorableText("probe", { field: "\\u0000" }); } catch (error) { console.log(error.stack); }`;
    const run = (...hooks: string[]) =>
      spawnSync(process.execPath, [...hooks, "--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
    const built = run("--import", "tsx", "--import", "./bench/built-package.mjs");
    expect(built.stderr).toBe("");
    expect(built.stdout).toContain(url("dist/base/storable-text.js"));
    expect(built.stdout).not.toContain("/src/");
    const sources = run("--import", "tsx");
    expect(sources.stdout).toContain(url("src/base/storable-text.ts"));
  });
});
