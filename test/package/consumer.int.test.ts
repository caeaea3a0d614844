import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { documentedBlocks } from "./readme-blocks.js";

/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepare`), the tarball
 * installed into a fresh project next to better-sqlite3 only, then plain `tsc` and plain `node`
 * there. The TypeScript blocks of the README, of docs/ and of the shop's README are that project's program:
 * they must compile against the packed package, and the README's quick start must run to completion and exit.
 */
const repo = join(import.meta.dirname, "../..");
const tsc = join(repo, "node_modules/.bin/tsc");
const dir = mkdtempSync(join(tmpdir(), "oncely-consumer-"));
const blocks = documentedBlocks(repo);
let tarball = "";

function run(file: string, args: string[], cwd = dir): string {
  try {
    return execFileSync(file, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(" ")} failed:\n${stdout ?? ""}\n${stderr ?? ""}`);
  }
}

const installedVersion = (name: string) =>
  (JSON.parse(readFileSync(join(repo, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;

function tsconfig(name: string, options: Record<string, unknown>): string {
  const compilerOptions = {
    target: "ES2022",
    lib: ["ES2023"],
    types: ["node"],
    strict: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    ...options,
  };
  writeFileSync(join(dir, name), JSON.stringify({ compilerOptions, include: ["*.ts"] }, null, 2));
  return name;
}

beforeAll(() => {
  const packed = run("npm", ["pack", "--silent", "--pack-destination", dir], repo).trim().split("\n");
  tarball = join(dir, packed[packed.length - 1] ?? "");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  // better-sqlite3 is linked from this repository: its native build is there, and no other network than the
  // npm registry is needed. pg and the NATS clients are deliberately not installed; fastify is, for oncely/console.
  run("npm", [
    "install",
    "--prefer-offline",
    "--no-audit",
    "--no-fund",
    "--ignore-scripts",
    tarball,
    join(repo, "node_modules/better-sqlite3"),
    `@types/node@${installedVersion("@types/node")}`,
    `@types/better-sqlite3@${installedVersion("@types/better-sqlite3")}`,
    `fastify@${installedVersion("fastify")}`,
    // The README's effects validate their input with zod, as a user's would.
    `zod@${installedVersion("zod")}`,
  ]);
  for (const { file, code } of blocks) writeFileSync(join(dir, file), code);
  writeFileSync(
    join(dir, "subpaths.ts"),
    [
      'import type { Journal } from "oncely";',
      'import { given, memoryJournal, SimulatedClock } from "oncely/testing";',
      'import { type ConformanceTestApi, journalConformance } from "oncely/testing/conformance";',
      'import { sqliteJournal } from "oncely/sqlite";',
      'import { consolePlugin } from "oncely/console";',
      'import { defineEffect, errors, type OutcomeOf } from "oncely";',
      'import { canonicalJson } from "oncely/advanced";',
      // A declared effect whose input is read by a plain function, not a schema library.
      'const ping = defineEffect({ kind: "ping", input: (raw: unknown) => String(raw), result: (raw: unknown) => Number(raw) });',
      'type Pinged = Extract<OutcomeOf<typeof ping>, { type: "oncely.effect.succeeded" }>;',
      "const pinged: (o: Pinged) => number = (o) => o.result + o.input.length;",
      "const journals: Journal[] = [memoryJournal(), sqliteJournal({ path: ':memory:' })];",
      "const api: ConformanceTestApi | undefined = undefined;",
      "const retryable: boolean = new errors.VersionConflictError('s', 1, 2).retryable;",
      "export { api, canonicalJson, consolePlugin, given, journalConformance, journals, ping, pinged, retryable, SimulatedClock };",
    ].join("\n"),
  );
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const postgres = await probePostgres();
/** The PostgreSQL schema's files in the repository, as the package must ship them. */
const schemaFiles = readdirSync(join(repo, "src/postgres/schema"), { recursive: true, encoding: "utf8" }).filter((f) =>
  f.endsWith(".sql"),
);

describe("the packed package in a fresh project", () => {
  it("ships dist/, README.md, LICENSE and package.json only, and no published file imports vitest", () => {
    const files = run("tar", ["-tzf", tarball]).trim().split("\n");
    const outside = files.filter((f) => !/^package\/(dist\/.+|README\.md|LICENSE|package\.json)$/.test(f));
    expect(outside).toEqual([]);
    expect(files).toContain("package/dist/cli/main.js");
    expect(schemaFiles.length).toBeGreaterThan(0);
    for (const f of schemaFiles) expect(files).toContain(`package/dist/postgres/schema/${f}`);
    const dist = join(dir, "node_modules/oncely/dist");
    const importsVitest = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter(
      (f) =>
        /\.(js|d\.ts)$/.test(f) &&
        /^\s*(import|export)\b[^;]*from\s*"vitest"/m.test(readFileSync(join(dist, f), "utf8")),
    );
    expect(importsVitest).toEqual([]);
  });

  it("typechecks the documented blocks and every subpath under node16, strict with exactOptionalPropertyTypes", () => {
    expect(blocks.map((b) => b.file)).toContain("readme-1.ts");
    expect(blocks.some((b) => b.file.startsWith("docs-"))).toBe(true);
    run(tsc, ["-p", tsconfig("tsconfig.node16.json", { module: "node16", moduleResolution: "node16", outDir: "out" })]);
  });

  it("typechecks them again under moduleResolution bundler", () => {
    run(tsc, [
      "-p",
      tsconfig("tsconfig.bundler.json", { module: "esnext", moduleResolution: "bundler", noEmit: true }),
    ]);
  });

  it("runs the README quick start with plain node on SQLite, to completion", () => {
    // Compiled by the node16 typecheck above (vitest runs a file's tests in order).
    expect(run(process.execPath, ["out/readme-1.js"]).trim()).toBe(
      '{"amount":1999,"payment":"Completed","paymentId":"ch_1"}',
    );
  });

  it("runs the CLI: npx oncely --help", () => {
    expect(run("npx", ["--no-install", "oncely", "--help"])).toMatch(/^Usage: oncely/);
  });

  it("names the driver to install when a back end's is missing", () => {
    const message = (subpath: string) =>
      run(process.execPath, [
        "--input-type=module",
        "-e",
        `import(${JSON.stringify(subpath)}).then(() => console.log("loaded"), (e) => console.log(e.message))`,
      ]).trim();
    expect(message("oncely/postgres")).toBe(
      'oncely/postgres needs the package "pg", which is not installed: npm install pg',
    );
    expect(message("oncely/nats")).toBe(
      'oncely/nats needs the package "@nats-io/transport-node", which is not installed: npm install @nats-io/transport-node',
    );
    expect(message("oncely/sqlite")).toBe("loaded");
  });

  it.skipIf(!postgres.available)(
    `migrates a fresh PostgreSQL schema from the files it ships, and commits${postgres.available ? "" : ` (skipped: ${postgres.reason})`}`,
    async () => {
      const { schema, drop } = await freshPgSchema("packed_package");
      try {
        // pg is not installed in this project (the test above needs it absent): oncely's driver loader
        // resolves it as a CommonJS require, which NODE_PATH reaches, from this repository.
        writeFileSync(
          join(dir, "migrate-postgres.mjs"),
          [
            'import { postgresJournal } from "oncely/postgres";',
            "const [url, schema] = process.argv.slice(2);",
            "const journal = postgresJournal({ connectionString: url, schema });",
            "await journal.migrate();",
            'const events = [{ eventId: "e-1", type: "Placed", data: {} }];',
            'const result = await journal.commit({ stream: "order/1", expectedVersion: 0, events, now: 1 });',
            "await journal.close();",
            "console.log(result.version);",
          ].join("\n"),
        );
        const out = execFileSync(process.execPath, ["migrate-postgres.mjs", PG_URL, schema], {
          cwd: dir,
          encoding: "utf8",
          env: { ...process.env, NODE_PATH: join(repo, "node_modules") },
        });
        expect(out.trim()).toBe("1");
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        const { rows } = await client
          .query(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1",
            [schema],
          )
          .finally(() => client.end());
        // A function replaced by a later migration ships once per migration, and exists once.
        const shipped = [
          ...new Set(
            schemaFiles
              .map((f) => f.split("/").pop() as string)
              .filter((f) => f.startsWith("oncely_"))
              .map((f) => f.replace(/\.sql$/, "")),
          ),
        ].sort();
        expect(rows.map((r) => r.proname)).toEqual(shipped);
      } finally {
        await drop();
      }
    },
  );
});
