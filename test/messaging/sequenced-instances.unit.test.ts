import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent, orderTimeline } from "./support/orders.js";

/**
 * Two instances of one sequenced consumer (two worker processes reading the same published log)
 * get the same event. B's inbox read answers before A commits: whatever B reads next, A's commit
 * of this very event must come out as a duplicate, never as another event claiming the version
 * (read inbox-then-checkpoint, the version was past the checkpoint with no inbox row in sight).
 */
function instance(journal: Journal) {
  return new Consumer({
    name: "timeline",
    journal,
    handler: orderTimeline,
    mode: "sequenced",
    clock: new SimulatedClock(),
    ids: sequentialIds("dl"),
    metrics: messagingMetrics(),
    gapTimeoutMs: 1000,
  });
}

/**
 * The shared journal, seen by B through a view whose first read of `method` is held, after it was
 * made, until `release`. Holding `getInbox`, the view has no `readState`, so the consumer reads one
 * by one (a journal smaller than `Journal`); holding `readState`, every answer of B's read is stale.
 */
function heldView(journal: Journal, released: Promise<void>, method: "getInbox" | "readState"): Journal {
  let first = true;
  return new Proxy(journal, {
    get(target, property, receiver) {
      if (property === "readState" && method === "getInbox") return undefined;
      if (property === method) {
        const read = Reflect.get(target, property, receiver) as (...args: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          const answer = await read.apply(target, args);
          if (first) {
            first = false;
            await released;
          }
          return answer;
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("two instances of one sequenced consumer", () => {
  it.each([
    ["between the inbox and checkpoint reads (read one by one)", "getInbox"],
    ["after the state was read (read together)", "readState"],
  ] as const)("an event the other instance committed %s is a duplicate", async (_, method) => {
    const journal = memoryJournal();
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = instance(journal);
    const b = instance(heldView(journal, released, method));
    const event = orderEvent("o1", 1);

    const fromB = b.handle(event);
    await new Promise((resolve) => setTimeout(resolve, 0));
    const fromA = await a.handle(event);
    release();

    expect(fromA.outcome).toBe("applied");
    expect((await fromB).outcome).toBe("duplicate");
    expect(await journal.getCheckpoint("timeline", "orders/o1")).toBe(1);
    expect((await journal.getDocument(orderTimeline.collection, "o1"))?.doc).toEqual({ timeline: ["1:OrderPlaced"] });
  });

  it("another event claiming a version already taken is still a conflict", async () => {
    const journal = memoryJournal();
    const a = instance(journal);
    await a.handle(orderEvent("o1", 1));
    const impostor = { ...orderEvent("o1", 1), eventId: "o1:forged" };
    await expect(instance(journal).handle(impostor)).rejects.toThrow(/claims version 1/);
  });

  it("a version parked just after the other instance filled the gap is released at once, not at the next gap check", async () => {
    const journal = memoryJournal();
    const a = instance(journal);
    await a.handle(orderEvent("o1", 1));
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // B has read checkpoint 1 for version 3 and is about to park it; A applies 2 (nothing parked yet to release).
    const b = instance(
      new Proxy(journal, {
        get(target, property, receiver) {
          if (property === "commit") {
            return async (commit: Parameters<Journal["commit"]>[0]) => {
              if (commit.park?.length) await released;
              return target.commit(commit);
            };
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
    );
    const fromB = b.handle(orderEvent("o1", 3));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect((await a.handle(orderEvent("o1", 2))).released).toBe(0);
    release();

    expect(await fromB).toEqual({ outcome: "parked", released: 1 });
    expect(await journal.getCheckpoint("timeline", "orders/o1")).toBe(3);
    expect(await journal.listParked("timeline", "orders/o1")).toEqual([]);
  });
});
