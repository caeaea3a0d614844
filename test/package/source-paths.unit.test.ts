import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const repo = join(import.meta.dirname, "../..");

it("tsconfig paths send every exported subpath to the source its built file comes from", () => {
  const exports = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")).exports as Record<
    string,
    string | { types: string; import: string }
  >;
  const fromExports = Object.fromEntries(
    Object.entries(exports)
      .filter((entry): entry is [string, { types: string; import: string }] => typeof entry[1] !== "string")
      .map(([subpath, target]) => [
        `oncely${subpath.slice(1)}`,
        [target.import.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts")],
      ]),
  );
  // tsconfig.json has line comments (and no trailing commas): drop them to read it as JSON.
  const tsconfig = JSON.parse(readFileSync(join(repo, "tsconfig.json"), "utf8").replace(/^\s*\/\/.*$/gm, ""));
  const paths = tsconfig.compilerOptions.paths;
  expect(paths).toEqual(fromExports);
});
