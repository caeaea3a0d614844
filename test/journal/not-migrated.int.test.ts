import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NotMigratedError } from "../../src/base/errors.js";
import type { Journal } from "../../src/journal/types.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

/** Every kind of call a user makes first: a commit, a read, a claim. Each must say to call migrate(). */
async function expectMigrateAdvice(journal: Journal): Promise<void> {
  const calls: (() => Promise<unknown>)[] = [
    () => journal.commit({ stream: "order/1", events: [{ eventId: "e1", type: "Placed", data: {} }], now: 1 }),
    () => journal.readStream("order/1"),
    () => journal.claimOutbox({ owner: "w", now: 1, leaseMs: 10, limit: 1 }),
  ];
  for (const call of calls) {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotMigratedError);
    expect((error as Error).message).toMatch(/call journal\.migrate\(\)/);
  }
  await journal.migrate();
  expect(await journal.readStream("order/1")).toEqual([]);
}

const service = await probePostgres();

describe("a journal used before migrate()", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-unmigrated-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("sqlite: says to call migrate()", async () => {
    const journal = sqliteJournal({ path: join(dir, "fresh.db") });
    try {
      await expectMigrateAdvice(journal);
    } finally {
      await journal.close();
    }
  });

  it.skipIf(!service.available)("postgres: says to call migrate()", async () => {
    const { schema, drop } = await freshPgSchema("unmigrated");
    const journal = postgresJournal({ connectionString: PG_URL, schema, max: 2 });
    try {
      await expectMigrateAdvice(journal);
    } finally {
      await journal.close();
      await drop();
    }
  });
});
