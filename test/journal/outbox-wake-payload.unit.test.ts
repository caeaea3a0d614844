import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeCommit, encodeOutboxWrite } from "../../src/journal/encode.js";
import { AddedRowsCollector, OutboxSignal, parseWakePayload, wakePayload } from "../../src/journal/outbox-signal.js";
import type { OutboxCategory } from "../../src/journal/types.js";
import { batchWakePayload } from "../../src/postgres/commit-batch.js";

const categories: OutboxCategory[] = ["effect", "message", "event"];

describe("the outbox NOTIFY's payload", () => {
  it("reads back what it says: categories and slices", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...categories), { minLength: 1 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 4095 }), { minLength: 1, maxLength: 64 }),
        (cats, slices) => {
          const added = new AddedRowsCollector();
          cats.forEach((category, i) => {
            added.add({ category, slice: slices[i % slices.length] as number });
          });
          for (const slice of slices) added.add({ category: cats[0] as OutboxCategory, slice });
          const read = parseWakePayload(wakePayload(added));
          expect(read && [...read.categories].sort()).toEqual([...cats].sort());
          expect(read && [...read.slices].sort((a, b) => a - b)).toEqual([...slices].sort((a, b) => a - b));
        },
      ),
    );
  });

  it("means 'not known' (everyone wakes) when empty, `*` or unreadable, and 'nothing due now' for `/`", () => {
    for (const payload of [undefined, "", "*", "effect", "effect/", "effect/x", "parcel/3", "effect/3,-1", "/3"])
      expect(parseWakePayload(payload), String(payload)).toBeUndefined();
    expect(parseWakePayload("/")).toEqual({ categories: new Set(), slices: new Set(), elsewhere: true });
    expect(wakePayload(new AddedRowsCollector())).toBe("/");
  });

  it("is written by the client from the rows its batch adds unleased and due now", () => {
    const now = 1_000;
    const row = (id: string, over: Record<string, unknown> = {}) => ({
      id,
      category: "effect" as const,
      kind: "charge",
      stream: `order/${id}`,
      payload: null,
      notBefore: now,
      ...over,
    });
    const commit = encodeCommit(
      {
        outbox: [
          row("a"),
          row("leased", { lease: { owner: "me", until: now + 10 } }),
          row("timer", { notBefore: now + 60_000 }),
          row("m", { category: "message", payload: { to: "shipment/9" } }),
        ],
        now,
      },
      16,
    );
    const read = parseWakePayload(batchWakePayload([commit]));
    expect([...(read?.categories ?? [])].sort()).toEqual(["effect", "message"]);
    const slices = commit.outbox.filter((r) => r.id === "a" || r.id === "m").map((r) => r.slice);
    expect([...(read?.slices ?? [])].sort()).toEqual([...new Set(slices)].sort());
    // A done or published update wakes nobody more; one that may leave its row claimable, everyone.
    expect(batchWakePayload([commit, encodeOutboxWrite("x", "me", { status: "done" }, now)])).toBe(
      batchWakePayload([commit]),
    );
    for (const update of [{}, { status: "pending" as const }, { attempts: 2 }])
      expect(batchWakePayload([commit, encodeOutboxWrite("x", "me", update, now)])).toBe("*");
    expect(batchWakePayload([encodeOutboxWrite("x", null, { status: "dead" }, now)])).toBe("*");
  });

  it("wakes a listener only for its categories and its slices; `undefined` wakes all", async () => {
    const signal = new OutboxSignal();
    const woke: string[] = [];
    signal.add(
      () => woke.push("mine"),
      ["effect"],
      (slice) => slice === 3,
    );
    signal.add(() => woke.push("any slice"), ["effect"]);
    signal.add(
      () => woke.push("events"),
      ["event"],
      (slice) => slice === 3,
    );
    signal.add(() => woke.push("waiter"), []);
    const flush = () => new Promise((r) => setTimeout(r, 0));
    signal.wake({ categories: new Set(["effect"]), slices: new Set([4]) });
    await flush();
    expect(woke.splice(0)).toEqual(["any slice"]);
    signal.wake({ categories: new Set(["effect", "event"]), slices: new Set([4, 3]) });
    await flush();
    expect(woke.splice(0).sort()).toEqual(["any slice", "events", "mine"]);
    signal.wake({ categories: new Set(), slices: new Set() });
    await flush();
    expect(woke.splice(0)).toEqual([]);
    // Another process's NOTIFY, even one that adds nothing to claim, wakes a waiter of no category.
    signal.wake(parseWakePayload("/"));
    await flush();
    expect(woke.splice(0)).toEqual(["waiter"]);
    signal.wake(parseWakePayload("effect/4"));
    await flush();
    expect(woke.splice(0).sort()).toEqual(["any slice", "waiter"]);
    signal.wake();
    await flush();
    expect(woke.splice(0).sort()).toEqual(["any slice", "events", "mine", "waiter"]);
  });
});
