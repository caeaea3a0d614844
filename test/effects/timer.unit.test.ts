import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CommandRejectedError, InvalidInputError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import type { TimerFired } from "../../src/core/decider.js";
import { createRuntime } from "../../src/core/runtime.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { deadline, TIMER_KIND } from "../../src/effects/timer.js";
import { getEffect } from "../../src/effects/view.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { type Parcel, type ParcelCommand, type ParcelEvent, parcelActor } from "./fixtures/parcel-actor.js";

const SHIP_WITHIN_MS = 60_000;
const parcel = parcelActor(SHIP_WITHIN_MS);

function setup(actor = parcel) {
  const journal = new MemoryJournal();
  const clock = new SimulatedClock();
  const registry = new Registry();
  const runtime = createRuntime({ journal, actors: [actor], clock });
  // No handler registered: timers are built in.
  const dispatcher = new Dispatcher({ journal, runtime, owner: "d1", clock, registry });
  const counter = async (name: string) => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    return (metric?.values ?? []).reduce((n, v) => n + v.value, 0);
  };
  return { journal, clock, runtime, dispatcher, counter };
}

describe("durable timers (deadline)", () => {
  it("fires at its time, not before; the owner records the missed deadline and it is counted", async () => {
    const { journal, clock, runtime, dispatcher, counter } = setup();
    const t0 = clock.now();
    await runtime.send("parcel/p1", { type: "Start" });
    expect(await dispatcher.runOnce()).toBe(0);
    expect(await getEffect(journal, "parcel:p1:ship-by")).toMatchObject({ status: "Pending" });
    clock.advance(SHIP_WITHIN_MS - 1);
    expect(await dispatcher.runOnce()).toBe(0);
    clock.advance(1);
    expect(await dispatcher.runOnce()).toBe(1);
    const { state } = await runtime.state<Parcel>("parcel/p1");
    expect(state.overdue).toBe(`not shipped by ${t0 + SHIP_WITHIN_MS} ({"id":"p1"})`);
    expect(await journal.getOutbox("parcel:p1:ship-by")).toMatchObject({
      kind: TIMER_KIND,
      status: "done",
      outcome: "fired",
    });
    expect(await counter("oncely_timer_fired_total")).toBe(1);
    expect(await counter("oncely_deadline_missed_total")).toBe(1);
    // Across actors it is an effect like any other: Pending until it fired, then Completed.
    expect(await getEffect(journal, "parcel:p1:ship-by")).toMatchObject({ kind: TIMER_KIND, status: "Completed" });
    // Done: it never fires again.
    clock.advance(SHIP_WITHIN_MS);
    expect(await dispatcher.runOnce()).toBe(0);
    // A late fact still lands and clears it.
    await runtime.send("parcel/p1", { type: "Ship" });
    expect((await runtime.state<Parcel>("parcel/p1")).state).toMatchObject({ shipped: true, overdue: null });
  });

  it("is ignored by state when the awaited fact came first: nothing to cancel, not counted as missed", async () => {
    const { clock, runtime, dispatcher, counter } = setup();
    await runtime.send("parcel/p2", { type: "Start" });
    await runtime.send("parcel/p2", { type: "Ship" });
    clock.advance(SHIP_WITHIN_MS);
    expect(await dispatcher.runOnce()).toBe(1);
    const { state, version } = await runtime.state<Parcel>("parcel/p2");
    expect(state).toEqual({ started: true, shipped: true, overdue: null });
    expect(version).toBe(2);
    expect(await counter("oncely_timer_fired_total")).toBe(1);
    expect(await counter("oncely_deadline_missed_total")).toBe(0);
  });

  it("requested twice with the same key is one timer, fired once", async () => {
    const { journal, clock, runtime, dispatcher, counter } = setup();
    await runtime.send("parcel/p3", { type: "Start" }, { messageId: "a" });
    clock.advance(1_000);
    await runtime.send("parcel/p3", { type: "Start" }, { messageId: "b" });
    expect(await journal.listOutbox({ kind: TIMER_KIND })).toHaveLength(1);
    clock.advance(SHIP_WITHIN_MS);
    expect(await dispatcher.runOnce()).toBe(1);
    expect(await dispatcher.runOnce()).toBe(0);
    expect(await counter("oncely_timer_fired_total")).toBe(1);
  });

  it("a fired timer delivered again (a crash after the owner's commit) is answered by the inbox", async () => {
    const { clock, runtime, dispatcher } = setup();
    await runtime.send("parcel/p4", { type: "Start" });
    clock.advance(SHIP_WITHIN_MS);
    await dispatcher.runOnce();
    const again = await runtime.send("parcel/p4", {
      type: "oncely.timer.fired",
      key: "parcel:p4:ship-by",
      name: "shipment",
      payload: { id: "p4" },
      dueAt: 0,
    });
    expect(again.duplicate).toBe(true);
    expect((await runtime.state<Parcel>("parcel/p4")).version).toBe(2);
  });

  it("an owner that refuses the fired timer leaves the row dead with the error, not retried forever", async () => {
    const refusing = defineActor<Parcel, ParcelCommand | TimerFired, ParcelEvent>({
      ...parcel,
      decide: (command, state, context) => {
        if (command.type === "oncely.timer.fired") throw new CommandRejectedError("no timers here");
        return parcel.decide(command, state, context);
      },
    });
    const { journal, clock, runtime, dispatcher, counter } = setup(refusing);
    await runtime.send("parcel/p5", { type: "Start" });
    clock.advance(SHIP_WITHIN_MS);
    await dispatcher.runOnce();
    expect(await journal.getOutbox("parcel:p5:ship-by")).toMatchObject({
      status: "dead",
      lastError: expect.stringContaining("no timers here"),
    });
    // Counted once, where an operator sees it and in the dispatcher's stats.
    expect(await counter("oncely_timer_dead_total")).toBe(1);
    expect(dispatcher.stats.dead).toBe(1);
  });

  it("refuses a deadline without a name, a key or a time, naming what is wrong", () => {
    expect(() => deadline({ name: "", key: "k", at: 1 })).toThrow(InvalidInputError);
    expect(() => deadline({ name: "n", key: "", at: 1 })).toThrow(/needs a key/);
    expect(() => deadline({ name: "n", key: "k", at: Number.NaN })).toThrow(/at must be a time/);
  });
});
