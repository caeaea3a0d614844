import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost, type Host, type Journal } from "../../src/index.js";
import { openJournal } from "../../src/journal/open.js";
import { startFixture } from "../journal/children.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { type Checkout, checkout, paymentKey } from "./fixtures/checkout.js";

/**
 * The waiter and the worker are two processes on one PostgreSQL schema: the worker commits the
 * command and the payment's outcome, the waiter (a host that is never started, so it runs
 * nothing itself) sees both through the journal alone.
 */
const pg = await probePostgres();

describe.skipIf(!pg.available)(`waitFor across processes on PostgreSQL ${pg.reason}`, () => {
  let drop: () => Promise<void>;
  let url: string;
  let journal: Journal;
  let host: Host;

  beforeAll(async () => {
    const fresh = await freshPgSchema("host_await");
    drop = fresh.drop;
    url = `${PG_URL}?schema=${fresh.schema}`;
    journal = await openJournal(url);
    await journal.migrate();
    host = createHost({ journal, actors: [checkout], name: "waiter" });
  });

  afterAll(async () => {
    await host?.stop();
    await journal?.close();
    await drop?.();
  });

  function worker(id: string, amount: number) {
    const lines: string[] = [];
    const { exited } = startFixture("../../host/fixtures/checkout-worker.ts", [url, id, String(amount)], (line) =>
      lines.push(line),
    );
    return { lines, exited };
  }

  it("resolves waitFor and waitForEffect with what another process committed", async () => {
    // Waiting starts before the other process exists: nothing is in the journal yet.
    const state = host.waitFor<Checkout>("checkout/41", (s) => s.payment === "Completed", { timeoutMs: 25_000 });
    const effect = host.waitForEffect(paymentKey("41"), { timeoutMs: 25_000 });
    const child = worker("41", 1999);
    const [seen, settled] = await Promise.all([state, effect]);
    expect(seen.state).toEqual({ amount: 1999, payment: "Completed", paymentId: "ch_1" });
    expect(settled).toMatchObject({ status: "Completed", result: { id: "ch_1" }, owner: "checkout/41" });
    const { code, stderr } = await child.exited;
    expect(code, stderr).toBe(0);
    expect(child.lines).toEqual(["sent", "done"]);
  }, 40_000);

  it("resolves a payment declined in another process as Failed; a wait for Completed times out naming the address", async () => {
    const child = worker("42", 50_000); // declined
    const settled = await host.waitForEffect(paymentKey("42"), { timeoutMs: 25_000 });
    expect(settled).toMatchObject({ status: "Failed", result: { error: "card declined" } });
    await expect(
      host.waitFor<Checkout>("checkout/42", (s) => s.payment === "Completed", { timeoutMs: 300 }),
    ).rejects.toThrow(/waiting for actor checkout\/42: its state at version 2/);
    expect((await child.exited).code).toBe(0);
  }, 40_000);
});
