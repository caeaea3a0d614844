import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { TerminalError } from "../../src/base/errors.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { migrations } from "../../src/postgres/migrations.js";
import { fileSql, functionFile, loadMigrations, SCHEMA_DIR } from "../../src/postgres/schema-files.js";
import { type Tables, tables } from "../../src/postgres/tables.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { schemaShape } from "./postgres-schema-shape.js";

/**
 * The PostgreSQL schema is frozen SQL files (src/postgres/schema/README.md): what a file says is what
 * a schema runs, each server function is one file, a fresh schema has only the functions the client
 * calls and the ones those call, and a schema of the numbering before the files is upgraded or refused.
 */

const src = join(import.meta.dirname, "../../src/postgres");
const CALL = /\$\{schema\}\.(oncely_\w+)\(/g;

/** The functions the client calls: the `Tables` entries that name one, each read by some client module. */
function clientFunctions(t: Tables): Map<string, string> {
  const calls = new Map<string, string>();
  for (const [field, value] of Object.entries(t)) {
    if (field.endsWith("Function")) calls.set(field, value.slice(t.qschema.length + 1));
  }
  return calls;
}

/** The client's functions and every function their files call, transitively. */
function reachable(from: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const todo = [...from];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    if (seen.has(name)) continue;
    seen.add(name);
    for (const [, called] of functionFile(migrations, name).file.text.matchAll(CALL)) {
      if (called !== name) todo.push(called as string);
    }
  }
  return seen;
}

describe("the schema files", () => {
  it("are the only place the schema is written: no TypeScript module creates a function, table or index", () => {
    const modules = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const ddl = modules.filter((f) => {
      const text = readFileSync(join(src, f), "utf8");
      // The bookkeeping table is the one exception: it must exist before any migration is asked about.
      const withoutBookkeeping = text.replace(/CREATE TABLE IF NOT EXISTS \$\{t\.migrations\}/g, "");
      return /CREATE (OR REPLACE )?FUNCTION|CREATE TABLE|CREATE INDEX|LANGUAGE plpgsql/i.test(withoutBookkeeping);
    });
    expect(ddl).toEqual([]);
  });

  it("hold one function a file, named as the file, created once (replaced by a later migration); other files none", () => {
    const created: string[] = [];
    for (const migration of migrations) {
      for (const file of migration.files) {
        const functions = [...file.text.matchAll(/CREATE (?:OR REPLACE )?FUNCTION \$\{schema\}\.(\w+)\(/g)];
        const where = `${migration.name}/${file.name}`;
        // Tables, indexes and backfills (00_tables.sql, 0002's column and backfill) create no function.
        if (!file.name.startsWith("oncely_")) {
          expect(functions, where).toEqual([]);
          continue;
        }
        // A function made by an earlier migration is replaced whole, never created again; one whose
        // arguments change is dropped by the same file first (0005's publish functions take a slice).
        const name = file.name.replace(/\.sql$/, "");
        const dropped = new RegExp(`DROP FUNCTION \\$\\{schema\\}\\.${name}\\([^)]*\\);\\s*CREATE FUNCTION`).test(
          file.text,
        );
        if (/CREATE OR REPLACE FUNCTION/.test(file.text) || dropped) {
          expect(created, `${where} replaces a function no earlier migration made`).toContain(file.name);
        } else {
          expect(created, `${where} creates a function made already`).not.toContain(file.name);
        }
        expect(
          functions.map((m) => m[1]),
          where,
        ).toEqual([file.name.replace(/\.sql$/, "")]);
        expect(file.text.split("\n").length, `${where} is over 300 lines`).toBeLessThanOrEqual(300);
        if (!created.includes(file.name)) created.push(file.name);
      }
    }
  });

  it("leave no function in force over 200 lines, comments counted (a longer one is split, as 0009_commit_parts did)", () => {
    // In force: each function's file in the latest migration that has one (older files stay frozen).
    const names = new Set(migrations.flatMap((m) => m.files.map((f) => f.name)).filter((n) => n.startsWith("oncely_")));
    const over = [...names].flatMap((name) => {
      const { migration, file } = functionFile(migrations, name.replace(/\.sql$/, ""));
      const lines = file.text.replace(/\n$/, "").split("\n").length;
      return lines > 200 ? [`${migration.name}/${file.name}: ${lines} lines`] : [];
    });
    expect(over).toEqual([]);
  });

  it("fill in the schema's name, quoted, wherever it appears, and refuse a placeholder they do not know", () => {
    const t = tables(`we"ird's`);
    const [baseline] = migrations;
    if (!baseline) throw new Error("no baseline");
    const sql = baseline.files.map((file) => fileSql(baseline, file, t)).join("\n");
    expect(sql).not.toContain("${");
    expect(sql).toContain(`CREATE TABLE "we""ird's".events`);
    expect(sql).toContain(`hashtextextended('oncely.published:we"ird''s', 0)`);
    expect(sql).toContain(`pg_notify('oncely_published_we"ird''s', '')`);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the SQL files' placeholders, not a template
    const file = { name: "x.sql", text: "SELECT ${schema}, ${schemaName}" };
    expect(() => fileSql(baseline, file, t)).toThrow(/0001_baseline\/x\.sql: unknown placeholder \$\{schemaName\}/);
  });

  describe("the loader", () => {
    const dir = mkdtempSync(join(tmpdir(), "oncely-schema-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const layout = (name: string, files: Record<string, string>): URL => {
      const root = join(dir, name);
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(join(root, path, ".."), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      return pathToFileURL(`${root}/`);
    };

    it("reads folders in version order and each folder's files in name order", () => {
      const url = layout("ok", {
        "0002_later/b.sql": "B",
        "0002_later/a.sql": "A",
        "0001_baseline/00_tables.sql": "T",
        "README.md": "notes",
      });
      expect(loadMigrations(url).map((m) => [m.version, m.name, m.files.map((f) => f.text)])).toEqual([
        [1, "0001_baseline", ["T"]],
        [2, "0002_later", ["A", "B"]],
      ]);
    });

    it("refuses a gap, a misnamed folder, a file that is not SQL and a missing folder, naming them", () => {
      expect(() => loadMigrations(layout("gap", { "0001_a/x.sql": "", "0003_c/x.sql": "" }))).toThrow(
        /"0003_c" is version 3, expected 2/,
      );
      expect(() => loadMigrations(layout("named", { "0001_a/x.sql": "", "2_b/x.sql": "" }))).toThrow(
        /"2_b" is not a migration folder/,
      );
      expect(() => loadMigrations(layout("other", { "0001_a/x.sql": "", "0001_a/x.ts": "" }))).toThrow(
        /holds \.sql files only/,
      );
      expect(() => loadMigrations(pathToFileURL(join(dir, "absent/")))).toThrow(
        /schema files are missing from .*absent/,
      );
    });

    it("loads the package's own folder", () => {
      expect(loadMigrations(SCHEMA_DIR)).toEqual(migrations);
    });
  });
});

const service = await probePostgres();

describe.skipIf(!service.available)(
  `the PostgreSQL schema${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    const drops: (() => Promise<void>)[] = [];
    let connected = false;
    const client = async () => {
      if (!connected) await admin.connect();
      connected = true;
      return admin;
    };
    afterAll(async () => {
      for (const drop of drops) await drop();
      if (connected) await admin.end();
    });
    const migrated = async (label: string, before?: (schema: string) => Promise<void>) => {
      const { schema, drop } = await freshPgSchema(label);
      drops.push(drop);
      await before?.(schema);
      const journal = postgresJournal({ connectionString: PG_URL, schema });
      try {
        await journal.migrate();
      } finally {
        await journal.close();
      }
      return schema;
    };

    it("has exactly the functions the client calls and the ones those call, each as its file says", async () => {
      const schema = await migrated("fresh");
      const t = tables(schema);
      const modules = readdirSync(src)
        .filter((f) => f.endsWith(".ts") && f !== "tables.ts")
        .map((f) => readFileSync(join(src, f), "utf8"))
        .join("\n");
      const called = clientFunctions(t);
      for (const field of called.keys())
        expect(modules, `no client module reads tables.${field}`).toContain(`.${field}`);
      const expected = reachable(called.values());
      // The commit functions' parts (0009_commit_parts) are reached through the functions that call them.
      expect([...expected].sort()).toEqual([
        "oncely_commit",
        "oncely_commit_checkpoints",
        "oncely_commit_docs",
        "oncely_commit_outbox",
        "oncely_commit_packed",
        "oncely_commit_parked",
        "oncely_commit_published",
        "oncely_commit_set_done",
        "oncely_commit_set_events",
        "oncely_commit_set_inbox",
        "oncely_commit_set_outbox",
        "oncely_commit_set_packed",
        "oncely_commit_set_updates",
        "oncely_commit_update",
        "oncely_publish",
        "oncely_publish_batch",
        "oncely_published_slice",
        "oncely_slice_of",
        "oncely_unpack",
      ]);
      const { rows } = await (await client()).query(
        `SELECT p.proname, p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1 ORDER BY p.proname`,
        [schema],
      );
      // And the two the outbox slices' backfill calls (0002_outbox_slices), which no client calls, and
      // the published log's (0005_published_slices), which the publish functions call for a client
      // that passes no slice (reachable above only when a publish function's body names it).
      expect(rows.map((r) => r.proname)).toEqual(
        [...new Set([...expected, "oncely_outbox_slice", "oncely_published_slice", "oncely_slice_of"])].sort(),
      );
      // The body PostgreSQL stores is the file's, placeholders filled in: nothing generated it.
      for (const row of rows) {
        const { migration, file } = functionFile(migrations, row.proname as string);
        const body = /\bAS \$(\w*)\$([\s\S]*)\$\1\$;/.exec(fileSql(migration, file, t))?.[2];
        expect(body, file.name).toBeDefined();
        expect(row.prosrc, file.name).toBe(body);
      }
    });

    it("records each migration once with its name, under concurrent migrate() calls", async () => {
      const { schema, drop } = await freshPgSchema("names");
      drops.push(drop);
      const journals = [1, 2, 3].map(() => postgresJournal({ connectionString: PG_URL, schema }));
      try {
        await Promise.all(journals.map((j) => j.migrate()));
      } finally {
        for (const j of journals) await j.close();
      }
      const { rows } = await (await client()).query(
        `SELECT version, name FROM "${schema}".oncely_schema_migrations ORDER BY version`,
      );
      expect(rows).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
    });

    it("works under a schema name that must be quoted: tables, functions, the published log's lock and channel", async () => {
      const schema = `t_"odd's"_${process.pid}_${Date.now().toString(36)}`;
      drops.push(async () => {
        await (await client()).query(`DROP SCHEMA IF EXISTS ${tables(schema).qschema} CASCADE`);
      });
      const journal = postgresJournal({ connectionString: PG_URL, schema });
      try {
        await journal.migrate();
        const result = await journal.commit({
          stream: "order/1",
          expectedVersion: 0,
          events: [{ eventId: "e-1", type: "Placed", data: {} }],
          now: 1,
        });
        expect(result.version).toBe(1);
        const positions = await Promise.all(
          ["a", "b"].map((id) => journal.appendPublished({ messageId: id, subject: "s", body: "{}" }, 1)),
        );
        expect(positions.sort()).toEqual([1, 2]);
      } finally {
        await journal.close();
      }
    });

    describe("a schema migrated before the baseline (versions 1-14, no `name` column)", () => {
      const fixture = readFileSync(join(import.meta.dirname, "postgres-development-schema.sql"), "utf8");
      const development = (schema: string) => async () => {
        await (await client()).query(fixture.replaceAll("DEV_SCHEMA", schema));
        // Data the upgrade must keep.
        await (await client()).query(
          `INSERT INTO "${schema}".events (stream, version, event_id, type, data, recorded_at, schema_version)
           VALUES ('order/1', 1, 'e-1', 'Placed', '{}', 1, 1)`,
        );
      };

      it("is upgraded in place: the baseline's functions and nothing else, its data kept, the baseline recorded", async () => {
        const fresh = await migrated("dev_fresh");
        const { schema, drop } = await freshPgSchema("dev_upgrade");
        drops.push(drop);
        await development(schema)();
        const before = await schemaShape(await client(), schema);
        expect(before.functions.map((f) => f.name)).toContain("oncely_commit_json");
        // Several processes starting at once: one upgrades, the others find it done.
        const journals = [1, 2, 3].map(() => postgresJournal({ connectionString: PG_URL, schema }));
        try {
          await Promise.all(journals.map((j) => j.migrate()));
          expect(await schemaShape(await client(), schema)).toEqual(await schemaShape(await client(), fresh));
          const { rows } = await (await client()).query(
            `SELECT version, name FROM "${schema}".oncely_schema_migrations ORDER BY version`,
          );
          expect(rows).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
          const journal = journals[0] as (typeof journals)[0];
          expect((await journal.readStream("order/1")).map((e) => e.eventId)).toEqual(["e-1"]);
          const next = await journal.commit({
            stream: "order/1",
            expectedVersion: 1,
            events: [{ eventId: "e-2", type: "Paid", data: {} }],
            now: 2,
          });
          expect(next.version).toBe(2);
        } finally {
          for (const j of journals) await j.close();
        }
      });

      it("with none of the fourteen versions recorded (only the old bookkeeping table), is migrated as a fresh one", async () => {
        const schema = await migrated("dev_empty", async (s) => {
          await (await client()).query(
            `CREATE TABLE "${s}".oncely_schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`,
          );
        });
        const { rows } = await (await client()).query(
          `SELECT version, name FROM "${schema}".oncely_schema_migrations ORDER BY version`,
        );
        expect(rows).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
      });

      it("with only some of the fourteen versions, is refused, naming them and what to do, and left as it was", async () => {
        const { schema, drop } = await freshPgSchema("dev_partial");
        drops.push(drop);
        await (await client()).query(
          `CREATE TABLE "${schema}".oncely_schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL);
           INSERT INTO "${schema}".oncely_schema_migrations SELECT v, 0 FROM generate_series(1, 9) AS v`,
        );
        const journal = postgresJournal({ connectionString: PG_URL, schema });
        try {
          const error = await journal.migrate().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(TerminalError);
          expect((error as Error).message).toMatch(
            new RegExp(
              `schema "${schema}" was migrated by a development version of oncely \\(versions 1, 2, 3, 4, 5, 6, 7, 8, 9 of 1-14.*Drop the schema \\(DROP SCHEMA "${schema}" CASCADE\\)`,
            ),
          );
        } finally {
          await journal.close();
        }
        const { rows } = await (await client()).query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
          [schema],
        );
        expect(rows).toEqual([{ table_name: "oncely_schema_migrations" }]);
      });
    });
  },
);
