import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openJournal } from "../../src/journal/open.js";
import type { NewOutboxRow } from "../../src/journal/types.js";
import { migrations as pgMigrations } from "../../src/postgres/migrations.js";
import { migrations as sqliteMigrations } from "../../src/sqlite/migrations.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { startFixture } from "./children.js";

/**
 * Four processes start on an empty store at once (their migrations race), then claim from one
 * outbox concurrently. No row may be handed to two owners, and every row is claimed.
 */
const CLAIMERS = 4;
const ROWS = 240;

async function contend(backend: string, url: string): Promise<void> {
  const claimedBy = new Map<string, string[]>();
  let ready = 0;
  let releaseReady: () => void = () => {};
  const allReady = new Promise<void>((resolve) => {
    releaseReady = resolve;
  });
  const children = Array.from({ length: CLAIMERS }, (_, n) =>
    startFixture("claim-loop.ts", [backend, url, `owner-${n}`], (line) => {
      if (line === "ready" && ++ready === CLAIMERS) releaseReady();
      const match = /^claimed (.+)$/.exec(line);
      if (match) claimedBy.set(match[1] as string, [...(claimedBy.get(match[1] as string) ?? []), `owner-${n}`]);
    }),
  );
  await Promise.race([
    allReady,
    Promise.all(children.map((c) => c.exited)).then((exits) => {
      throw new Error(`claimers exited before ready: ${exits.map((e) => e.stderr).join("\n")}`);
    }),
  ]);
  const journal = await openJournal(url);
  try {
    const rows: NewOutboxRow[] = Array.from({ length: ROWS }, (_, i) => ({
      id: `row-${i}`,
      category: "effect",
      kind: "k",
      stream: `s/${i % 13}`,
      payload: { i },
      notBefore: 0,
    }));
    for (let i = 0; i < ROWS; i += 60) await journal.commit({ outbox: rows.slice(i, i + 60), now: 0 });
    for (const { child } of children) child.stdin?.write("go\n");
    const exits = await Promise.all(children.map((c) => c.exited));
    for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);
    const doubles = [...claimedBy].filter(([, owners]) => owners.length > 1);
    expect(doubles).toEqual([]);
    expect(claimedBy.size).toBe(ROWS);
    for (const [id, owners] of claimedBy) expect((await journal.getOutbox(id))?.leaseOwner).toBe(owners[0]);
    // Contention really happened: more than one process got rows.
    expect(new Set([...claimedBy.values()].map((o) => o[0])).size).toBeGreaterThan(1);
  } finally {
    await journal.close();
  }
}

describe("outbox claims from several processes: sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-claims-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`hands each row to exactly one of ${CLAIMERS} processes, after they all migrated one fresh file`, async () => {
    const path = join(dir, "claims.db");
    await contend("sqlite", `sqlite:${path}`);
    const db = new Database(path, { readonly: true });
    try {
      const applied = db.prepare("SELECT version FROM oncely_schema_migrations ORDER BY version").all();
      expect(applied).toEqual(sqliteMigrations.map((m) => ({ version: m.version })));
    } finally {
      db.close();
    }
  });
});

const service = await probePostgres();
describe.skipIf(!service.available)(
  `outbox claims from several processes: postgres${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    it(`hands each row to exactly one of ${CLAIMERS} processes, after they all migrated one fresh schema`, async () => {
      const { schema, drop } = await freshPgSchema("claims");
      try {
        const url = new URL(PG_URL);
        url.searchParams.set("schema", schema);
        await contend("postgres", url.toString());
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        try {
          const applied = await client.query(
            `SELECT version FROM "${schema}".oncely_schema_migrations ORDER BY version`,
          );
          expect(applied.rows).toEqual(pgMigrations.map((m) => ({ version: m.version })));
        } finally {
          await client.end();
        }
      } finally {
        await drop();
      }
    });
  },
);
