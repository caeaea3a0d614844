import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { openJournal } from "../../src/journal/open.js";
import type { PostgresJournal } from "../../src/postgres/journal.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-open-journal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("openJournal", () => {
  it("defaults to a migrated SQLite file in the data directory, creating the directory", async () => {
    const dataDir = join(dir, "nested", "data");
    const journal = await openJournal(undefined, { dataDir });
    expect(journal.backend).toBe("sqlite");
    expect(existsSync(join(dataDir, "oncely.db"))).toBe(true);
    await journal.commit({ stream: "a/1", events: [{ eventId: "e1", type: "T", data: 1 }], now: 1 });
    await journal.close();
    const again = await openJournal(`sqlite:${join(dataDir, "oncely.db")}`);
    expect(await again.streamVersion("a/1")).toBe(1);
    await again.close();
  });

  it("opens sqlite:PATH, file:PATH and memory:", async () => {
    for (const url of [`sqlite:${join(dir, "a", "j.db")}`, `file:${join(dir, "b", "j.db")}`]) {
      const journal = await openJournal(url);
      expect(journal.backend).toBe("sqlite");
      expect(await journal.streamVersion("x/1")).toBe(0);
      await journal.close();
    }
    expect(existsSync(join(dir, "a", "j.db"))).toBe(true);
    expect(existsSync(join(dir, "b", "j.db"))).toBe(true);
    const memory = await openJournal("memory:");
    expect(memory.backend).toBe("memory");
  });

  it("refuses anything else, naming the value and the accepted forms", async () => {
    for (const url of ["mysql://root@db/x", "nats://x", "sqlite:", "./data/x.db"]) {
      const error = await openJournal(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toContain(url);
      expect((error as Error).message).toContain("postgres://");
      expect((error as Error).message).toContain("sqlite:PATH");
    }
    const secret = await openJournal("mongodb://user:hunter2@db/x").catch((e: unknown) => e);
    expect((secret as Error).message).not.toContain("hunter2");
  });
});

const service = await probePostgres();
describe.skipIf(!service.available)(
  `openJournal on PostgreSQL${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    it("takes the schema from ?schema= and connects without it", async () => {
      const { schema, drop } = await freshPgSchema("open_journal");
      try {
        const url = new URL(PG_URL);
        url.searchParams.set("schema", schema);
        const journal = (await openJournal(url.toString().replace(/^postgres:/, "postgresql:"))) as PostgresJournal;
        expect(journal.backend).toBe("postgres");
        expect(journal.tables.schema).toBe(schema);
        expect(journal.options.connectionString).not.toContain("schema=");
        await journal.commit({ stream: "a/1", events: [{ eventId: "e1", type: "T", data: 1 }], now: 1 });
        expect(await journal.streamVersion("a/1")).toBe(1);
        await journal.close();
      } finally {
        await drop();
      }
    });

    it("takes the slice count from ?slices=, and refuses one that is not a power of two, naming it", async () => {
      const { schema, drop } = await freshPgSchema("open_journal_slices");
      try {
        const url = new URL(PG_URL);
        url.searchParams.set("schema", schema);
        url.searchParams.set("slices", "16");
        const journal = (await openJournal(url.toString())) as PostgresJournal;
        expect(journal.sliceCount).toBe(16);
        expect(journal.options.connectionString).not.toContain("slices=");
        await journal.close();
        for (const bad of ["12", "0", "many"]) {
          url.searchParams.set("slices", bad);
          const error = await openJournal(url.toString()).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InvalidInputError);
          expect((error as Error).message).toContain(`slices=${bad}`);
          expect((error as Error).message).toContain("power of two");
        }
      } finally {
        await drop();
      }
    });
  },
);
