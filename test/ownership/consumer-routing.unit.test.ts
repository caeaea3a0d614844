import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/core/runtime.js";
import { type Ownership, sliceOf } from "../../src/core/slices.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { encodeEnvelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProcessManager } from "../../src/messaging/process-manager.js";
import { CommandRouter } from "../../src/ownership/router.js";
import { orderEvent } from "../messaging/support/orders.js";

const SLICES = 8;
const owning = (owned: (slice: number) => boolean): Ownership => ({
  sliceCount: SLICES,
  owns: owned,
  fence: () => undefined,
  onChange: () => () => {},
});

const fulfilment = defineProcessManager<{ started: boolean }, { type: "Started" }>({
  type: "fulfilment",
  correlate: (e) => (e.type === "PaymentProcessed" ? e.correlationId : undefined),
  initialState: () => ({ started: false }),
  evolve: () => ({ started: true }),
  react: (state) => (state.started ? {} : { events: [{ type: "Started" }] }),
});

describe("a consumer given a router", () => {
  it("sends the command it routes to the worker owning the actor, once however often the event arrives", async () => {
    const journal = new MemoryJournal({ sliceCount: SLICES });
    const theirs = sliceOf("o1", SLICES);
    const worker = (ownership: Ownership, name: string) => {
      const runtime = createRuntime({ journal, actors: [fulfilment.actor] });
      const router = new CommandRouter({ runtime, journal, ownership, pollMs: { initial: 1, max: 5 } });
      const dispatcher = new Dispatcher({ journal, runtime: router, owner: name, ownership, pollIntervalMs: 5 });
      return { runtime, router, dispatcher };
    };
    const a = worker(
      owning((s) => s !== theirs),
      "a",
    );
    const b = worker(
      owning((s) => s === theirs),
      "b",
    );
    const consumer = new Consumer({
      name: "fulfilment",
      journal,
      handler: fulfilment.route,
      runtime: a.runtime,
      commands: a.router,
      metrics: messagingMetrics(),
    });
    b.dispatcher.start();
    try {
      const paid = orderEvent("o1", 2);
      expect((await consumer.handle(paid)).outcome).toBe("applied");
      expect((await consumer.handle(paid)).outcome).toBe("duplicate");
      expect(a.runtime.stats.commands).toBe(0);
      expect(b.runtime.stats.commands).toBe(1);
    } finally {
      await b.dispatcher.stop();
    }
  });

  it("never dead-letters an event whose command found no owner in time: nak'ed, left for when the slice settles", async () => {
    const journal = new MemoryJournal({ sliceCount: SLICES });
    const theirs = sliceOf("o1", SLICES);
    const runtime = createRuntime({ journal, actors: [fulfilment.actor] });
    // The owner of o1's slice is cut off: nobody delivers the forward, which times out.
    const ownership = owning((s) => s !== theirs);
    const router = new CommandRouter({ runtime, journal, ownership, timeoutMs: 20, pollMs: { initial: 1, max: 5 } });
    const consumer = new Consumer({
      name: "fulfilment",
      journal,
      handler: fulfilment.route,
      runtime,
      commands: router,
      metrics: messagingMetrics(),
      maxDeliveries: 2,
    });
    const body = encodeEnvelope(orderEvent("o1", 2));
    for (const attempt of [1, 2, 3]) {
      const outcome = await consumer.deliver({
        subject: "shop.x",
        body,
        messageId: undefined,
        attempt,
        maxDeliveries: 2,
      });
      expect(outcome.kind).toBe("nak");
    }
    expect(await journal.listDeadLetters()).toEqual([]);
  });
});
