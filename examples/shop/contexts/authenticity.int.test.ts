import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteJournal } from "oncely/sqlite";
import { afterAll } from "vitest";
import { onPostgres } from "../../../test/journal/pg-subject.js";
import { authenticitySuite } from "./authenticity-suite.js";

/** The forged-event scenarios of `authenticity-suite.ts` on the stores the shop runs on. */

const dir = mkdtempSync(join(tmpdir(), "oncely-shop-authenticity-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
authenticitySuite("sqlite", async () => {
  // A file per test: each scenario starts from an empty store.
  const journal = sqliteJournal({ path: join(dir, `shop-${files++}.db`) });
  await journal.migrate();
  return { journal, cleanup: () => journal.close() };
});

// Under CI=true an unreachable PostgreSQL throws here and fails the file (test/support/services.ts).
await onPostgres("shop_authenticity", `forged integration events on the shop's transport`, (factory) => {
  authenticitySuite("postgres", factory);
});
