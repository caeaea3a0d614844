import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * The names a TypeScript entry point exports, values and types, followed through every re-export
 * (`export *`, `export type *`, `export { a as b } from`, `export * as ns from`) down to the declaring
 * files. TypeScript 7 ships no compiler API to ask, and a runtime import sees values only, so this
 * reads the sources: it understands the export forms this repository uses (biome-formatted ESM) and
 * throws on a re-export it cannot resolve, rather than undercount.
 *
 *   npx tsx scripts/exported-names.ts src/index.ts          # the count, values and types
 *   npx tsx scripts/exported-names.ts src/index.ts --list   # every name with its kind, sorted
 */

export type ExportKind = "value" | "type";

/** Name -> kind: a value has a runtime binding (function, const, class, enum, namespace); a type has none. */
export type ExportMap = Map<string, ExportKind>;

/** The source with comments blanked out, string and template literals kept (a URL in a string is not a comment). */
export function stripComments(source: string): string {
  let out = "";
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end === -1 ? source.length : end + 2;
      out += " ";
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === "\\" ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function resolveSpecifier(from: string, specifier: string): string {
  if (!specifier.startsWith(".")) throw new Error(`${from}: cannot follow the re-export of package "${specifier}"`);
  const base = resolve(dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")];
  const found = candidates.find((c) => existsSync(c));
  if (found === undefined) throw new Error(`${from}: cannot resolve "${specifier}"`);
  return found;
}

const DECLARATION =
  /\bexport\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(function\*?|const|let|var|class|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)/g;
const STAR = /\bexport\s+(type\s+)?\*\s+(?:as\s+([A-Za-z_$][\w$]*)\s+)?from\s+["']([^"']+)["']/g;
const LIST = /\bexport\s+(type\s+)?\{([^}]*)\}(?:\s*from\s+["']([^"']+)["'])?/g;

/** Every name `file` exports with its kind; `cache` shares work across files. */
export function exportedNames(file: string, cache = new Map<string, ExportMap>()): ExportMap {
  const path = resolve(file);
  const cached = cache.get(path);
  if (cached !== undefined) return cached;
  const names: ExportMap = new Map();
  cache.set(path, names);
  return exportedNamesOf(readFileSync(path, "utf8"), path, cache, names);
}

/**
 * The names a piece of source exports (a whole file, or one part of one), its relative re-exports
 * resolved from `path`.
 */
export function exportedNamesOf(
  text: string,
  path: string,
  cache = new Map<string, ExportMap>(),
  names: ExportMap = new Map(),
): ExportMap {
  const source = stripComments(text);
  const add = (name: string, kind: ExportKind) => {
    // A name declared as both (a const and a type of one name) is a value: it exists at run time.
    if (names.get(name) !== "value") names.set(name, kind);
  };
  for (const [, keyword, name] of source.matchAll(DECLARATION)) {
    add(name as string, keyword === "interface" || keyword === "type" ? "type" : "value");
  }
  for (const [, typeOnly, alias, specifier] of source.matchAll(STAR)) {
    if (alias !== undefined) {
      add(alias, typeOnly ? "type" : "value");
      continue;
    }
    const target = exportedNames(resolveSpecifier(path, specifier as string), cache);
    // `export *` never re-exports a default; no file here has one.
    for (const [name, kind] of target) add(name, typeOnly ? "type" : kind);
  }
  for (const [, typeOnly, list, specifier] of source.matchAll(LIST)) {
    const target = specifier === undefined ? undefined : exportedNames(resolveSpecifier(path, specifier), cache);
    for (const raw of (list as string).split(",")) {
      const item = raw.trim();
      if (item === "") continue;
      const match = /^(type\s+)?([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(item);
      if (match === null) throw new Error(`${path}: cannot read the export "${item}"`);
      const [, itemType, local, exported] = match as unknown as [
        string,
        string | undefined,
        string,
        string | undefined,
      ];
      let kind: ExportKind = "value";
      if (typeOnly || itemType) kind = "type";
      else if (target !== undefined) {
        const found = target.get(local);
        if (found === undefined) throw new Error(`${path}: "${local}" is not exported by ${specifier}`);
        kind = found;
      } else if (new RegExp(`\\b(?:interface|type)\\s+${local}\\b`).test(source)) {
        kind = "type";
      }
      add(exported ?? local, kind);
    }
  }
  return names;
}

/** Sorted names by kind, for printing and comparing. */
export function summarize(names: ExportMap): { values: string[]; types: string[] } {
  const sorted = [...names].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    values: sorted.filter(([, k]) => k === "value").map(([n]) => n),
    types: sorted.filter(([, k]) => k === "type").map(([n]) => n),
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [entry, flag] = process.argv.slice(2);
  if (entry === undefined) {
    console.error("usage: tsx scripts/exported-names.ts <entry.ts> [--list]");
    process.exit(2);
  }
  const { values, types } = summarize(exportedNames(entry));
  console.log(`${entry}: ${values.length + types.length} names (${values.length} values, ${types.length} types)`);
  if (flag === "--list") {
    for (const v of values) console.log(`value ${v}`);
    for (const t of types) console.log(`type  ${t}`);
  }
}
