import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** Module hooks (see built-package.mjs): a module of `src/` resolves to its build in `dist/`. */

const ROOT = new URL("../", import.meta.url).href;
const SRC = `${ROOT}src/`;
const DIST = `${ROOT}dist/`;

/** The built module for a source module's URL (`src/a/b.ts` → `dist/a/b.js`); any other URL as it is. */
export function builtUrl(url) {
  if (!url.startsWith(SRC) || !url.endsWith(".ts")) return url;
  return `${DIST}${url.slice(SRC.length, -".ts".length)}.js`;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const url = builtUrl(resolved.url);
  if (url === resolved.url) return resolved;
  if (!existsSync(fileURLToPath(url))) {
    throw new Error(`${fileURLToPath(url)} does not exist: run \`npm run build\` before the bench`);
  }
  return { url, format: "module", shortCircuit: true };
}

/** The build is loaded as `tsc` wrote it, never transformed again. */
export async function load(url, context, nextLoad) {
  if (!url.startsWith(DIST)) return nextLoad(url, context);
  return { format: "module", source: await readFile(fileURLToPath(url), "utf8"), shortCircuit: true };
}
