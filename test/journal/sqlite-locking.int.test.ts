import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/base/errors.js";
import { sqliteJournal } from "../../src/sqlite/index.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-sqlite-locking-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("sqlite journal file and locks", () => {
  it("puts the file in WAL mode", async () => {
    const path = join(dir, "wal.db");
    const journal = sqliteJournal({ path, synchronous: "NORMAL" });
    await journal.migrate();
    await journal.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
  });

  it("fails a write with a retryable error when another connection holds the write lock past the busy timeout", async () => {
    const path = join(dir, "busy.db");
    const journal = sqliteJournal({ path, busyTimeoutMs: 100 });
    await journal.migrate();
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    try {
      const started = Date.now();
      const error = await journal
        .commit({ stream: "a/1", events: [{ eventId: "e1", type: "T", data: 1 }], now: 1 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailableError);
      expect((error as StorageUnavailableError).retryable).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(90);
      await expect(journal.claimOutbox({ owner: "d", now: 1, leaseMs: 10, limit: 1 })).rejects.toBeInstanceOf(
        StorageUnavailableError,
      );
      // Readers are not blocked by a writer in WAL mode.
      expect(await journal.streamVersion("a/1")).toBe(0);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(
      (await journal.commit({ stream: "a/1", events: [{ eventId: "e1", type: "T", data: 1 }], now: 1 })).version,
    ).toBe(1);
    await journal.close();
  });

  it("refuses use after close with an error that does not invite a retry", async () => {
    const journal = sqliteJournal({ path: join(dir, "closed.db") });
    await journal.migrate();
    await journal.close();
    await journal.close();
    const error = await journal.streamVersion("a/1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(StorageUnavailableError);
  });
});
