import { describe, expect, it, vi } from "vitest";
import { CommandRejectedError, RetriesExhaustedError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal, StoreFault } from "../../src/journal/memory.js";
import type { Commit, Journal } from "../../src/journal/types.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { type CounterState, counter } from "./fixtures/counter.js";

let runtimes = 0;
// Each runtime its own id prefix: event ids are unique across the journal, as in production (random ids).
const setup = (journal: Journal = memoryJournal(), extra: { maxActive?: number; idleMs?: number } = {}) =>
  createRuntime({
    journal,
    actors: [counter],
    clock: new SimulatedClock(),
    ids: sequentialIds(`r${++runtimes}`),
    ...extra,
  });

describe("actor runtime", () => {
  it("appends the decided events and returns the reply after the commit", async () => {
    const journal = memoryJournal();
    const runtime = setup(journal);
    const result = await runtime.send("counter/a", { type: "Add", amount: 2 });
    expect(result).toMatchObject({ reply: 2, version: 1, duplicate: false });
    const events = await journal.readStream("counter/a");
    expect(events.map((e) => e.data)).toEqual([{ type: "Added", amount: 2 }]);
    expect(events[0]).toMatchObject({ stream: "counter/a", version: 1, type: "Added", schemaVersion: 1 });
  });

  it("runs commands for one actor one at a time, in arrival order", async () => {
    const runtime = setup();
    const amounts = Array.from({ length: 100 }, (_, i) => i + 1);
    await Promise.all(amounts.map((amount) => runtime.send("counter/a", { type: "Add", amount })));
    const { state, version } = await runtime.state<CounterState>("counter/a");
    expect(version).toBe(100);
    expect(state.history).toEqual(amounts);
    expect(runtime.stats.conflicts).toBe(0);
  });

  it("runs different actors concurrently", async () => {
    // The commit of actor a waits until actor b has committed: a global queue would deadlock.
    const inner = memoryJournal();
    let releaseA: () => void = () => {};
    const bCommitted = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    const journal: Journal = Object.assign(Object.create(inner), {
      commit: async (c: Commit) => {
        if (c.stream === "counter/a") await bCommitted;
        const result = await inner.commit(c);
        if (c.stream === "counter/b") releaseA();
        return result;
      },
    });
    const runtime = setup(journal);
    const a = runtime.send("counter/a", { type: "Add", amount: 1 });
    const b = runtime.send("counter/b", { type: "Add", amount: 1 });
    await expect(Promise.all([a, b])).resolves.toHaveLength(2);
  });

  it("answers a repeated message id from the inbox, committing nothing", async () => {
    const journal = memoryJournal();
    const runtime = setup(journal);
    const first = await runtime.send("counter/a", { type: "Add", amount: 5 }, { messageId: "m1" });
    await runtime.send("counter/a", { type: "Add", amount: 1 });
    const again = await runtime.send("counter/a", { type: "Add", amount: 5 }, { messageId: "m1" });
    expect(again).toMatchObject({ reply: first.reply, duplicate: true });
    expect(await journal.streamVersion("counter/a")).toBe(2);
  });

  it("reads nothing before its commit for a command to a cached actor, message id included", async () => {
    const journal = memoryJournal();
    const runtime = setup(journal);
    await runtime.send("counter/a", { type: "Add", amount: 1 });
    const reads = (["getInbox", "readStream", "latestSnapshot", "streamVersion"] as const).map((name) =>
      vi.spyOn(journal, name),
    );
    await runtime.send("counter/a", { type: "Add", amount: 2 }, { messageId: "m-new" });
    for (const read of reads) expect(read, read.getMockName()).not.toHaveBeenCalled();
    // The duplicate check is the commit's inbox row; the stored reply is read only when it conflicts.
    const again = await runtime.send("counter/a", { type: "Add", amount: 2 }, { messageId: "m-new" });
    expect(again).toMatchObject({ reply: 3, duplicate: true, version: 2 });
    expect(reads[0]).toHaveBeenCalledTimes(1);
  });

  it("answers a repeated message id from the inbox even when decide would now refuse it", async () => {
    const door = defineActor<{ open: boolean }, { type: "Open" }, { type: "Opened" }>({
      type: "door",
      initialState: () => ({ open: false }),
      evolve: () => ({ open: true }),
      decide(_command, state) {
        if (state.open) throw new CommandRejectedError("already open");
        return { events: [{ type: "Opened" }], reply: "opened" };
      },
    });
    const runtime = createRuntime({ journal: memoryJournal(), actors: [door], clock: new SimulatedClock() });
    expect(await runtime.send("door/1", { type: "Open" }, { messageId: "open-1" })).toMatchObject({ reply: "opened" });
    const again = await runtime.send("door/1", { type: "Open" }, { messageId: "open-1" });
    expect(again).toMatchObject({ reply: "opened", duplicate: true, version: 1 });
    await expect(runtime.send("door/1", { type: "Open" }, { messageId: "open-2" })).rejects.toThrow("already open");
  });

  it("a refusal decided on a cached state another host moved past is decided again on the fresh state", async () => {
    // Two hosts of one actor (two workers on one journal). The second host appends the fact the
    // command needs; the first, with its cache one version behind, must not refuse for good.
    const door = defineActor<{ open: boolean }, { type: "Open" } | { type: "Close" }, { type: "Opened" | "Closed" }>({
      type: "door",
      initialState: () => ({ open: false }),
      evolve: (_state, event) => ({ open: event.type === "Opened" }),
      decide(command, state) {
        if (command.type === "Open") return { events: [{ type: "Opened" }] };
        if (!state.open) throw new CommandRejectedError("the door was never opened");
        return { events: [{ type: "Closed" }], reply: "closed" };
      },
    });
    const journal = memoryJournal();
    const one = createRuntime({ journal, actors: [door], clock: new SimulatedClock() });
    const two = createRuntime({ journal, actors: [door], clock: new SimulatedClock() });
    await one.state("door/1"); // cached at version 0
    await two.send("door/1", { type: "Open" });
    expect(await one.send("door/1", { type: "Close" }, { messageId: "close-1" })).toMatchObject({
      reply: "closed",
      version: 2,
    });
    // A refusal on a fresh state stays a refusal.
    await expect(one.send("door/1", { type: "Close" }, { messageId: "close-2" })).rejects.toThrow("never opened");
  });

  it("commits nothing when decide refuses, and the actor keeps working", async () => {
    const journal = memoryJournal();
    const runtime = setup(journal);
    await expect(runtime.send("counter/a", { type: "Boom" })).rejects.toBeInstanceOf(CommandRejectedError);
    await runtime.send("counter/a", { type: "Add", amount: 1 });
    expect(await journal.streamVersion("counter/a")).toBe(1);
  });

  it("writes effects to the outbox in the same commit, and a repeated key is a no-op", async () => {
    const journal = memoryJournal();
    const runtime = setup(journal);
    await runtime.send("counter/a", { type: "Add", amount: 3 });
    await runtime.send("counter/a", { type: "Notify" });
    await runtime.send("counter/a", { type: "Notify" });
    const rows = await journal.listOutbox();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: "counter:a:notify", kind: "notify", stream: "counter/a", status: "pending" });
    expect(rows[0]?.payload).toMatchObject({ input: { total: 3 } });
  });

  it("sends nothing when the commit fails: no outbox row, no event", async () => {
    let fail = true;
    const journal = memoryJournal({ commitFault: () => (fail ? "abort" : undefined) });
    const runtime = setup(journal);
    await expect(runtime.send("counter/a", { type: "Notify" })).rejects.toBeInstanceOf(StoreFault);
    expect(await journal.listOutbox()).toEqual([]);
    expect(await journal.streamVersion("counter/a")).toBe(0);
    fail = false;
    await runtime.send("counter/a", { type: "Notify" });
    expect(await journal.listOutbox()).toHaveLength(1);
  });

  it("after an ambiguous commit, a retry with the same message id gets the stored reply", async () => {
    let ambiguous = true;
    const journal = memoryJournal({ commitFault: () => (ambiguous ? "ambiguous" : undefined) });
    const runtime = setup(journal);
    await expect(runtime.send("counter/a", { type: "Add", amount: 7 }, { messageId: "m" })).rejects.toThrow();
    ambiguous = false;
    const retry = await runtime.send("counter/a", { type: "Add", amount: 7 }, { messageId: "m" });
    expect(retry).toMatchObject({ duplicate: true, reply: 7 });
    const { state } = await runtime.state<CounterState>("counter/a");
    expect(state.total).toBe(7);
  });

  it("two runtimes on one journal never append at one version: conflicts reload and decide again", async () => {
    const journal = memoryJournal();
    const one = setup(journal);
    const two = setup(journal);
    const sends: Promise<unknown>[] = [];
    for (let i = 1; i <= 40; i++) {
      sends.push((i % 2 ? one : two).send("counter/a", { type: "Add", amount: i }));
    }
    await Promise.all(sends);
    const events = await journal.readStream("counter/a");
    expect(events.map((e) => e.version)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(events.map((e) => (e.data as { amount: number }).amount).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    expect(one.stats.conflicts + two.stats.conflicts).toBeGreaterThan(0);
  });

  it("gives up with RetriesExhaustedError when conflicts never stop", async () => {
    const inner = memoryJournal();
    const journal: Journal = Object.assign(Object.create(inner), {
      // Another writer always appends first.
      commit: async (c: Commit) => {
        await inner.commit({
          stream: c.stream,
          events: [{ eventId: crypto.randomUUID(), type: "Added", data: { type: "Added", amount: 0 } }],
          now: c.now,
        });
        return inner.commit(c);
      },
    });
    const runtime = createRuntime({ journal, actors: [counter], maxConflictRetries: 3 });
    await expect(runtime.send("counter/a", { type: "Add", amount: 1 })).rejects.toBeInstanceOf(RetriesExhaustedError);
  });

  it("recovers evicted actors from the journal, from snapshot + tail", async () => {
    const journal = memoryJournal();
    const runtime = setup(journal);
    for (let i = 1; i <= 12; i++) await runtime.send("counter/a", { type: "Add", amount: i });
    const live = await runtime.state<CounterState>("counter/a");
    expect(await journal.latestSnapshot("counter/a")).toMatchObject({ version: 10, schemaVersion: 1 });
    runtime.evict("counter/a");
    const recovered = await runtime.state<CounterState>("counter/a");
    expect(recovered).toEqual(live);
    const fresh = setup(journal);
    expect(await fresh.state("counter/a")).toEqual(live);
  });

  it("ignores a snapshot of another schema version or one that fails validation", async () => {
    const journal = memoryJournal();
    const runtime = setup(journal);
    for (let i = 1; i <= 6; i++) await runtime.send("counter/a", { type: "Add", amount: i });
    const expected = (await runtime.state<CounterState>("counter/a")).state;
    // A corrupt snapshot at the same version: only validation can tell.
    await journal.commit({
      stream: "counter/a",
      snapshot: { version: 6, schemaVersion: 1, state: { total: -1 } },
      now: 0,
    });
    const strict = createRuntime({
      journal,
      actors: [
        {
          ...counter,
          snapshot: {
            every: 5,
            schemaVersion: 1,
            validate: (s) => {
              if (!Array.isArray((s as CounterState).history)) throw new Error("bad snapshot");
              return s as CounterState;
            },
          },
        },
      ],
    });
    expect((await strict.state("counter/a")).state).toEqual(expected);
    const newerShape = createRuntime({ journal, actors: [{ ...counter, snapshot: { every: 5, schemaVersion: 2 } }] });
    expect((await newerShape.state("counter/a")).state).toEqual(expected);
  });

  it("calls onRecovered after rebuilding from the journal; its commands go through the mailbox", async () => {
    const journal = memoryJournal();
    await setup(journal).send("counter/a", { type: "Add", amount: 1 });
    const recoveredWith: number[] = [];
    const runtime = createRuntime({
      journal,
      actors: [
        {
          ...counter,
          onRecovered: (state) => {
            recoveredWith.push(state.total);
            return [{ type: "Resume" }];
          },
        },
      ],
    });
    await runtime.send("counter/a", { type: "Add", amount: 1 });
    await runtime.state("counter/a"); // queued behind the Resume command
    expect(recoveredWith).toEqual([1]);
    expect((await journal.readStream("counter/a")).map((e) => e.data)).toEqual([
      { type: "Added", amount: 1 },
      { type: "Added", amount: 1 },
      { type: "Added", amount: 0 },
    ]);
  });

  it("passivates beyond maxActive and idle actors, and reactivates them on the next command", async () => {
    const clock = new SimulatedClock();
    const journal = memoryJournal();
    const runtime = createRuntime({ journal, actors: [counter], clock, maxActive: 10, idleMs: 1000 });
    for (let i = 0; i < 200; i++) await runtime.send(`counter/${i}`, { type: "Add", amount: i });
    expect(runtime.activeCount).toBeLessThanOrEqual(10);
    expect(runtime.stats.passivations).toBeGreaterThanOrEqual(190);
    clock.advance(2000);
    await runtime.send("counter/fresh", { type: "Add", amount: 1 });
    expect(runtime.activeCount).toBe(1);
    expect((await runtime.send("counter/5", { type: "Add", amount: 1 })).reply).toBe(6);
  });

  it("refuses an address without a registered type", async () => {
    const runtime = setup();
    expect(() => runtime.send("nobody/1", { type: "Add" })).toThrow(/no actor type "nobody"/);
    expect(() => runtime.send("no-slash", { type: "Add" })).toThrow(/type\/id/);
  });
});

describe("reads across processes", () => {
  it("state() catches up with events another runtime appended to a cached actor", async () => {
    const journal = memoryJournal();
    const one = createRuntime({ journal, actors: [counter], ids: sequentialIds("one") });
    const two = createRuntime({ journal, actors: [counter], ids: sequentialIds("two") });
    await one.send("counter/a", { type: "Add", amount: 1 });
    expect((await one.state<CounterState>("counter/a")).state.total).toBe(1); // now cached in `one`
    await two.send("counter/a", { type: "Add", amount: 10 });
    const read = await one.state<CounterState>("counter/a");
    expect(read).toMatchObject({ version: 2, state: { total: 11, history: [1, 10] } });
  });
});
