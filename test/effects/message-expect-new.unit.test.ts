import { describe, expect, it } from "vitest";
import { defineActor } from "../../src/core/actor.js";
import { createRuntime } from "../../src/core/runtime.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { memoryJournal } from "../../src/journal/memory.js";

/** A sender that asks `box/<id>` to count, saying (or not) that the message starts the box. */
const sender = defineActor<null, { type: "Ask"; box: string; n: number; starts: boolean }, { type: "Asked" }>({
  type: "sender",
  initialState: () => null,
  evolve: (s) => s,
  decide: (c) => ({
    events: [{ type: "Asked" }],
    send: [{ to: `box/${c.box}`, id: `ask:${c.box}:${c.n}`, command: { type: "Count" }, expectNew: c.starts }],
  }),
});
const box = defineActor<{ n: number }, { type: "Count" }, { type: "Counted"; n: number }>({
  type: "box",
  initialState: () => ({ n: 0 }),
  evolve: (_s, e) => ({ n: e.n }),
  decide: (_c, s) => ({ events: [{ type: "Counted", n: s.n + 1 }] }),
});

function world() {
  const inner = memoryJournal();
  const reads: string[] = [];
  const journal = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== "readFromSnapshot" && key !== "readStream" && key !== "latestSnapshot") return value;
      return (stream: string, ...rest: unknown[]) => {
        reads.push(stream);
        return (value as (...a: unknown[]) => unknown).apply(target, [stream, ...rest]);
      };
    },
  });
  const runtime = createRuntime({ journal, actors: [sender, box] });
  const dispatcher = new Dispatcher({ journal, runtime, owner: "d" });
  const counts = async (id: string) => (await inner.readStream(`box/${id}`)).map((e) => (e.data as { n: number }).n);
  return { runtime, dispatcher, reads, counts };
}

describe("a message that starts its receiver (MessageRequest.expectNew)", () => {
  it("is decided without reading the receiver", async () => {
    const { runtime, dispatcher, reads, counts } = world();
    await runtime.send("sender/1", { type: "Ask", box: "a", n: 1, starts: true });
    await dispatcher.runOnce();
    expect(await counts("a")).toEqual([1]);
    expect(reads.filter((s) => s === "box/a")).toEqual([]);
    // Without the hint the receiver is read when it wakes.
    await runtime.send("sender/1", { type: "Ask", box: "b", n: 1, starts: false });
    await dispatcher.runOnce();
    expect(reads.filter((s) => s === "box/b").length).toBeGreaterThan(0);
  });

  it("lands once on the stored state when the receiver has events after all", async () => {
    const { runtime, dispatcher, counts } = world();
    await runtime.send("box/c", { type: "Count" });
    runtime.evict();
    await runtime.send("sender/1", { type: "Ask", box: "c", n: 1, starts: true });
    await dispatcher.runOnce();
    expect(await counts("c")).toEqual([1, 2]);
    // The same message again (a redelivery): the receiver's inbox answers it.
    runtime.evict();
    expect(await runtime.send("box/c", { type: "Count" }, { messageId: "ask:c:1", expectNew: true })).toMatchObject({
      duplicate: true,
    });
    expect(await counts("c")).toEqual([1, 2]);
  });
});
