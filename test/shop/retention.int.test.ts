import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { type Shop, startShop } from "../../examples/shop/service/shop.js";
import { openJournal } from "../../src/journal/open.js";

const DAY = 24 * 60 * 60_000;
const dir = mkdtempSync(join(tmpdir(), "oncely-shop-retention-"));
let shop: Shop | undefined;
afterAll(async () => {
  await shop?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("the shop's worker prunes inbox and done outbox rows past the 7-day window when it starts, and keeps the rest", async () => {
  const url = `sqlite:${join(dir, "shop.db")}`;
  const journal = await openJournal(url);
  const now = Date.now();
  const row = (id: string) => ({
    id,
    category: "effect" as const,
    kind: "k",
    stream: "order/x",
    payload: {},
    notBefore: now,
  });
  // Rows a real shop would never run: kind "k" has no handler and they are done or far in the future.
  await journal.commit({ outbox: [row("old"), row("young")], now: now - 9 * DAY });
  await journal.commit({ outboxDone: [{ id: "old", outcome: "completed" }], now: now - 8 * DAY });
  await journal.commit({ outboxDone: [{ id: "young", outcome: "completed" }], now: now - 6 * DAY });
  await journal.commit({ inbox: { consumer: "order/x", messageId: "old", reply: null }, now: now - 8 * DAY });
  await journal.commit({ inbox: { consumer: "order/x", messageId: "young", reply: null }, now: now - 6 * DAY });
  await journal.close();

  shop = await startShop({ port: 0, databaseUrl: url, dataDir: dir, effectTimeoutMs: 1000 });
  for (let i = 0; i < 100 && (await shop.journal.getOutbox("old")); i++) await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 100 && (await shop.journal.getInbox("order/x", "old")); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(await shop.journal.getOutbox("old")).toBeUndefined();
  expect((await shop.journal.getOutbox("young"))?.status).toBe("done");
  expect(await shop.journal.getInbox("order/x", "old")).toBeUndefined();
  expect(await shop.journal.getInbox("order/x", "young")).toBeDefined();
});
