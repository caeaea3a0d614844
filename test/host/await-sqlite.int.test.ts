import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createHost, InProcessTransport } from "../../src/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { type Checkout, checkout, paidView, paymentKey, paymentProvider } from "./fixtures/checkout.js";

/** The host on a SQLite file: waits wake in-process on the host's own commits. */
describe("the host on SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-host-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("awaits a state, an effect and a drain, then stops; a second host on the file sees it all", async () => {
    const journal = sqliteJournal({ path: join(dir, "host.db") });
    await journal.migrate();
    const host = createHost({
      journal,
      actors: [checkout],
      handlers: [paymentProvider().handler],
      relay: { transport: new InProcessTransport() },
      consumers: [{ name: "paid", handler: paidView, subjects: ["oncely.>"] }],
    });
    await host.start();
    const paid = host.waitFor<Checkout>("checkout/1", (s) => s.payment === "Completed", { timeoutMs: 5_000 });
    await host.send("checkout/1", { type: "Checkout", amount: 300 }, { messageId: "r1" });
    expect((await paid).state.paymentId).toBe("ch_1");
    expect(await host.waitForEffect(paymentKey("1"), { timeoutMs: 5_000 })).toMatchObject({ status: "Completed" });
    await host.drain({ timeoutMs: 5_000 });
    expect((await journal.getDocument("paid", "1"))?.doc).toEqual({ paymentId: "ch_1" });
    await host.stop();
    await journal.close();

    const reopened = sqliteJournal({ path: join(dir, "host.db") });
    const reader = createHost({ journal: reopened, actors: [checkout] });
    const { state } = await reader.waitFor<Checkout>("checkout/1", (s) => s.payment === "Completed", {
      timeoutMs: 100,
    });
    expect(state).toEqual({ amount: 300, payment: "Completed", paymentId: "ch_1" });
    await reader.stop();
    await reopened.close();
  });
});
