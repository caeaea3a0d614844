import { describe, expect, it } from "vitest";
import { DEFAULT_REDELIVERY_WINDOW_MS } from "../../src/base/defaults.js";
import { InvalidInputError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { DEFAULT_INBOX_RETENTION_MS, InboxRetention } from "../../src/retention/inbox.js";
import { DEFAULT_OUTBOX_RETENTION_MS, OutboxRetention, pruneOutbox } from "../../src/retention/outbox.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { FakePaymentProvider, paymentHandler } from "../effects/fixtures/fake-provider.js";
import { paymentActor, paymentKey } from "../effects/fixtures/payment-actor.js";
import { World } from "../effects/fixtures/world.js";
import { effectRow } from "../journal/fixtures/outbox-row.js";

const DAY = 24 * 60 * 60_000;
const WEEK = 7 * DAY;

const row = (id: string) => effectRow(id);

/**
 * An actor that requests its charge on every command, whatever its state: the protocol forbids
 * it, and it is exactly the decider for which the done outbox row is the only guard.
 */
const careless = defineActor<{ charges: number }, { type: string }, { type: "ChargeAsked" }>({
  type: "careless",
  initialState: () => ({ charges: 0 }),
  evolve: (state) => ({ charges: state.charges + 1 }),
  decide(command, _state, { id }) {
    if (command.type.startsWith("oncely.")) return {};
    return {
      events: [{ type: "ChargeAsked" }],
      effects: [{ kind: "payment", key: `careless:${id}:charge`, input: { orderId: id, amount: 5 } }],
    };
  },
});

describe("outbox retention", () => {
  it("keeps done rows for the redelivery window by default, the same window as the inbox", () => {
    expect(DEFAULT_OUTBOX_RETENTION_MS).toBe(WEEK);
    expect(DEFAULT_OUTBOX_RETENTION_MS).toBe(DEFAULT_INBOX_RETENTION_MS);
    expect(DEFAULT_REDELIVERY_WINDOW_MS).toBe(WEEK);
    const job = new OutboxRetention({ journal: memoryJournal() });
    expect([job.retentionMs, job.intervalMs]).toEqual([WEEK, 60 * 60_000]);
    expect(new InboxRetention({ journal: memoryJournal() }).intervalMs).toBe(job.intervalMs);
  });

  it("refuses a window shorter than the redelivery window, and any non-positive option, naming it", async () => {
    const journal = memoryJournal();
    expect(() => new OutboxRetention({ journal, retentionMs: DAY })).toThrow(/shorter than the redelivery window/);
    await expect(pruneOutbox(journal, { now: WEEK, retentionMs: WEEK - 1 })).rejects.toBeInstanceOf(InvalidInputError);
    expect(new OutboxRetention({ journal, retentionMs: DAY, redeliveryWindowMs: DAY }).retentionMs).toBe(DAY);
    expect(() => new OutboxRetention({ journal, retentionMs: 0 })).toThrow(/outbox retention must be a positive/);
    expect(() => new OutboxRetention({ journal, intervalMs: -1 })).toThrow(/outbox pruning interval/);
    expect(() => new OutboxRetention({ journal, batchSize: 0.5 })).toThrow(/batch size must be a positive integer/);
  });

  it("prunes batch after batch until no done row older than the window is left", async () => {
    const journal = memoryJournal();
    const old = Array.from({ length: 7 }, (_, i) => `old-${i}`);
    await journal.commit({ outbox: [...old, "young", "open"].map(row), now: 0 });
    await journal.commit({ outboxDone: old.map((id) => ({ id, outcome: "completed" })), now: 10 });
    await journal.commit({ outboxDone: [{ id: "young", outcome: "completed" }], now: 11 });
    const options = { now: 11 + DAY, retentionMs: DAY, redeliveryWindowMs: DAY, batchSize: 3 };
    expect(await pruneOutbox(journal, options)).toBe(7);
    expect((await journal.listOutbox({})).map((r) => r.id)).toEqual(["young", "open"]);
    expect(await pruneOutbox(journal, { ...options, now: 10 * WEEK })).toBe(1);
    expect((await journal.listOutbox({})).map((r) => r.id)).toEqual(["open"]);
  });

  it("the job prunes on its own schedule using the injected clock", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock(0);
    await journal.commit({ outbox: [row("k1")], now: 0 });
    await journal.commit({ outboxDone: [{ id: "k1", outcome: "completed" }], now: 0 });
    const job = new OutboxRetention({ journal, clock, retentionMs: 1_000, redeliveryWindowMs: 1_000, intervalMs: 500 });
    job.start();
    await new Promise((r) => setImmediate(r));
    expect(await journal.getOutbox("k1")).toBeDefined();
    clock.advance(1_500);
    for (let i = 0; i < 10 && (await journal.getOutbox("k1")); i++) await new Promise((r) => setImmediate(r));
    expect(await journal.getOutbox("k1")).toBeUndefined();
    await job.stop();
  });

  describe("an effect never runs twice because its done row was pruned", () => {
    it("an actor that follows the protocol answers a late duplicate from its state, row or no row", async () => {
      const journal = memoryJournal();
      const provider = new FakePaymentProvider(false);
      const w = new World(journal, [paymentActor], [paymentHandler(provider)]);
      const request = { type: "RequestPayment", amount: 30 };
      await w.node.runtime.send("order/7", request, { messageId: "client-req-1" });
      await w.drain();
      expect((await journal.getOutbox(paymentKey("7")))?.status).toBe("done");

      w.clock.advance(WEEK + 1);
      const inbox = new InboxRetention({ journal, clock: w.clock });
      const outbox = new OutboxRetention({ journal, clock: w.clock });
      expect(await inbox.runOnce()).toBeGreaterThan(0);
      expect(await outbox.runOnce()).toBe(1);
      expect(await journal.getOutbox(paymentKey("7"))).toBeUndefined();

      w.crash(); // no cached state: the duplicate is decided from the replayed events
      const late = await w.node.runtime.send("order/7", request, { messageId: "client-req-1" });
      await w.drain();
      expect(late.duplicate).toBe(false); // the inbox forgot it too
      expect(late.reply).toMatchObject({ status: "Completed" });
      expect(provider.calls).toEqual([paymentKey("7")]);
      expect(await journal.getOutbox(paymentKey("7"))).toBeUndefined();
    });

    it("for an actor that requests the key again, the done row is the guard for the whole window", async () => {
      const journal = memoryJournal();
      const provider = new FakePaymentProvider(false);
      const w = new World(journal, [careless], [paymentHandler(provider)]);
      await w.node.runtime.send("careless/1", { type: "Charge" }, { messageId: "m1" });
      await w.drain();
      const doneAt = (await journal.getOutbox("careless:1:charge"))?.updatedAt ?? Number.NaN;
      const job = new OutboxRetention({ journal, clock: w.clock });

      // The last moment of the window: the row stays, and a request under a new message id is a no-op.
      w.clock.set(doneAt + job.retentionMs);
      expect(await job.runOnce()).toBe(0);
      await w.node.runtime.send("careless/1", { type: "Charge" }, { messageId: "m2" });
      await w.drain();
      expect(provider.calls).toHaveLength(1);

      // Past it the key is forgotten, and such an actor charges again: why the window may not be
      // shorter than the redelivery window (and why deciders must check the effect's status).
      // Once only: the actor's inbox already holds the key's outcome, and that duplicate finishes
      // the new row instead of leaving it to run again at every lease expiry.
      w.clock.set(doneAt + job.retentionMs + 1);
      expect(await job.runOnce()).toBe(1);
      await w.node.runtime.send("careless/1", { type: "Charge" }, { messageId: "m3" });
      await w.drain();
      expect(provider.calls).toHaveLength(2);
      expect((await journal.getOutbox("careless:1:charge"))?.status).toBe("done");
    });
  });
});
