import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { type Envelope, encodeEnvelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import type { Delivery } from "../../src/messaging/transport.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { acceptedV1, acceptedV2, paid, salesRelease } from "./fixtures/deferral.js";
import { orderV1 } from "./fixtures/orders-v1.js";
import { orderV2 } from "./fixtures/orders-v2.js";
import type { Sale } from "./fixtures/sales.js";

/**
 * A message written by a newer release than the consumer's (a rolling upgrade: producers already
 * on release 2, this worker still on release 1) is not this worker's to handle and nothing is
 * wrong with it: it waits for a release 2 worker. It must never use up the delivery budget and go
 * to dead letters, where no worker would ever see it again.
 */

const delivery = (envelope: Envelope, attempt: number, maxDeliveries = 3): Delivery => ({
  subject: `ordering.${envelope.type}`,
  body: encodeEnvelope(envelope),
  messageId: envelope.eventId,
  attempt,
  maxDeliveries,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** `promise`, or an error naming `what` after `ms`. */
function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe("messages too new for this worker", () => {
  it("are nak'ed with a growing, capped delay on every delivery, never dead-lettered; warned about once, counted each time", async () => {
    const journal = memoryJournal();
    const v1 = salesRelease(1, journal, { maxDeliveries: 3, deferBaseMs: 1_000, deferMaxMs: 8_000 });
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 12; attempt++) {
      const outcome = await v1.consumer.deliver(delivery(acceptedV2("n1"), attempt));
      expect(outcome.kind, `delivery ${attempt}`).toBe("nak");
      if (outcome.kind === "nak") delays.push(outcome.delayMs);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000, 8_000, 8_000, 8_000, 8_000, 8_000]);
    expect(await journal.listDeadLetters()).toEqual([]);
    expect(v1.projected).toEqual([]);
    expect(await v1.deferrals()).toBe(12);
    const warned = v1.logger.warnings.filter((w) => w.obj.eventId === "order:n1:OrderAccepted");
    expect(warned).toHaveLength(1);
    expect(warned[0]?.msg).toMatch(/newer release.*not dead-lettered/);
    expect(String(warned[0]?.obj.err)).toMatch(/OrderAccepted is at version 2, this code knows up to version 1/);

    // Sequenced: its version is not consumed, and what follows parks behind it as behind any gap.
    expect(await v1.consumer.deliver(delivery(paid("n1"), 1))).toEqual({ kind: "ack" });
    expect(await journal.getCheckpoint("sales", "ordering/n1")).toBe(0);
    expect((await journal.listParked("sales")).map((p) => p.version)).toEqual([2]);

    // A release 2 worker reads it, and releases what was parked behind it.
    const v2 = salesRelease(2, journal, { maxDeliveries: 3 });
    expect(await v2.consumer.deliver(delivery(acceptedV2("n1"), 13))).toEqual({ kind: "ack" });
    expect(await journal.getCheckpoint("sales", "ordering/n1")).toBe(2);
    expect((await journal.getDocument("sales", "n1"))?.doc).toEqual({
      email: "n1@example.com",
      channel: "app",
      paid: true,
    } satisfies Sale);
    // The release 1 worker's next copy is a duplicate (the inbox holds it): acknowledged, not deferred.
    expect(await v1.consumer.deliver(delivery(acceptedV2("n1"), 14))).toEqual({ kind: "ack" });
    expect(await v1.deferrals()).toBe(12);
    expect(await journal.listDeadLetters()).toEqual([]);
  });

  it("a command for an actor whose stream a newer release wrote is deferred too", async () => {
    const journal = memoryJournal();
    await createRuntime({ journal, actors: [orderV2] }).send("order/n1", {
      type: "PlaceOrder",
      email: "bo@example.com",
      amount: 5,
      channel: "app",
    });
    const consumer = new Consumer({
      name: "cancellations",
      journal,
      runtime: createRuntime({ journal, actors: [orderV1] }),
      handler: { kind: "command", route: (e) => ({ address: `order/${e.aggregateId}`, command: { type: "Cancel" } }) },
      metrics: messagingMetrics(),
      maxDeliveries: 2,
    });
    const cancel: Envelope = { ...paid("n1"), type: "CancelRequested", eventId: "cancel:n1" };
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await consumer.deliver(delivery(cancel, attempt, 2))).kind).toBe("nak");
    }
    expect(await journal.listDeadLetters()).toEqual([]);
  });

  it("a newer worker's delivery budget is counted from its own first failure, not from the deliveries older workers deferred", async () => {
    const journal = memoryJournal();
    let failing = true;
    const flaky = new Consumer({
      name: "sales-flaky",
      journal,
      handler: {
        kind: "projection",
        collection: "flaky",
        key: (e) => e.aggregateId,
        project: () => {
          if (failing) throw new Error("read model briefly unavailable");
          return { ok: true };
        },
      },
      upcast: { OrderAccepted: { version: 2 } },
      metrics: messagingMetrics(),
      maxDeliveries: 3,
      retryBaseMs: 100,
      retryMaxMs: 10_000,
    });
    // Release 1 workers deferred it 29 times; the broker counted each. This worker's first try fails.
    expect(await flaky.deliver(delivery(acceptedV2("n1"), 30))).toEqual({ kind: "nak", delayMs: 100 });
    expect(await flaky.deliver(delivery(acceptedV2("n1"), 31))).toEqual({ kind: "nak", delayMs: 200 });
    expect(await journal.listDeadLetters()).toEqual([]);
    failing = false;
    expect(await flaky.deliver(delivery(acceptedV2("n1"), 32))).toEqual({ kind: "ack" });
    expect((await journal.getDocument("flaky", "n1"))?.doc).toEqual({ ok: true });
    // A message that keeps failing still goes to dead letters after its budget: three failures here.
    failing = true;
    const other = acceptedV2("n2");
    for (const attempt of [40, 41]) expect((await flaky.deliver(delivery(other, attempt))).kind).toBe("nak");
    expect(await flaky.deliver(delivery(other, 42))).toEqual({ kind: "ack" });
    expect((await journal.listDeadLetters()).map((d) => [d.messageId, d.attempts])).toEqual([
      ["order:n2:OrderAccepted", 42],
    ]);
  });

  it("on the journal transport: a release 1 and a release 2 process read the log; release 2 handles it, release 1 moves on", async () => {
    const journal = memoryJournal();
    // Two processes, each with its own reader of the published log under the consumer's name.
    const t1 = new JournalTransport({ journal, pollMs: 20 });
    const t2 = new JournalTransport({ journal, pollMs: 20 });
    const v1 = salesRelease(1, journal, { maxDeliveries: 3, deferBaseMs: 5, deferMaxMs: 40 });
    const v2 = salesRelease(2, journal, { maxDeliveries: 3, deferBaseMs: 5, deferMaxMs: 40 });
    const attempts = new Map<string, number>();
    const sub1 = await t1.subscribe("sales", { subjects: [">"], maxDeliveries: 3 }, (d) => {
      const { eventId } = JSON.parse(d.body) as Envelope;
      attempts.set(eventId, Math.max(attempts.get(eventId) ?? 0, d.attempt));
      return v1.consumer.deliver(d);
    });
    const events = [acceptedV1("o1"), paid("o1"), acceptedV2("n1"), paid("n1"), acceptedV2("n2"), paid("n2")];
    for (const e of events) await t1.publish(e, `ordering.${e.type}`);
    // Long enough that, counted against the budget, both would be dead letters by now.
    const pastBudget = (id: string) => (attempts.get(`order:${id}:OrderAccepted`) ?? 0) > 4;
    await until(
      async () => (pastBudget("n1") && pastBudget("n2")) || (await journal.listDeadLetters()).length > 0,
      "release 1 to defer n1 and n2 past its budget",
    );
    expect(await journal.listDeadLetters()).toEqual([]);
    expect((await journal.listParked("sales")).map((p) => p.source).sort()).toEqual(["ordering/n1", "ordering/n2"]);

    const sub2 = await v2.consumer.subscribe(t2, { subjects: [">"] });
    await within(t2.idle(), "release 2 to read the whole log");
    // Release 1 acknowledges the copies release 2 handled, so its own reader is not held behind them.
    await within(t1.idle(), "release 1 to settle the messages release 2 handled");
    await Promise.all([sub1.stop(), sub2.stop()]);

    expect(await journal.listDeadLetters()).toEqual([]);
    expect(await journal.listParked("sales")).toEqual([]);
    const newer = ["order:n1:OrderAccepted", "order:n2:OrderAccepted"];
    expect(v1.projected.filter((id) => newer.includes(id))).toEqual([]);
    expect(new Set(v2.projected.filter((id) => newer.includes(id)))).toEqual(new Set(newer));
    for (const id of ["n1", "n2"]) {
      expect((await journal.getDocument("sales", id))?.doc).toEqual({
        email: `${id}@example.com`,
        channel: "app",
        paid: true,
      });
    }
    expect((await journal.getDocument("sales", "o1"))?.doc).toMatchObject({ channel: "web", paid: true });
    expect(await v1.deferrals()).toBeGreaterThanOrEqual(10);
    expect(v1.logger.warnings.filter((w) => /newer release/.test(w.msg)).map((w) => w.obj.eventId)).toEqual(
      expect.arrayContaining(newer),
    );
    expect(v1.logger.warnings.filter((w) => /newer release/.test(w.msg))).toHaveLength(2);
  });

  it("on the in-process transport: deferred by release 1 however often, handled once release 2 subscribes", async () => {
    const journal = memoryJournal();
    const transport = new InProcessTransport({ retryBaseMs: 5, retryMaxMs: 20 });
    const v1 = salesRelease(1, journal, { maxDeliveries: 2, deferBaseMs: 5, deferMaxMs: 20 });
    const sub1 = await v1.consumer.subscribe(transport, { subjects: [">"] });
    await transport.publish(acceptedV2("n1"), "ordering.OrderAccepted");
    await transport.publish(paid("n1"), "ordering.OrderPaid");
    await until(
      async () => (await v1.deferrals()) >= 6 || (await journal.listDeadLetters()).length > 0,
      "release 1 to defer three times its budget",
    );
    expect(await journal.listDeadLetters()).toEqual([]);
    await sub1.stop();

    const v2 = salesRelease(2, journal, { maxDeliveries: 2 });
    const sub2 = await v2.consumer.subscribe(transport, { subjects: [">"] });
    await until(async () => (await journal.getCheckpoint("sales", "ordering/n1")) === 2, "release 2 to handle n1");
    await transport.idle();
    await sub2.stop();
    expect(await journal.listDeadLetters()).toEqual([]);
    expect(v1.projected).toEqual([]);
    expect((await journal.getDocument("sales", "n1"))?.doc).toEqual({
      email: "n1@example.com",
      channel: "app",
      paid: true,
    });
  });
});
