/**
 * Sequential flows. The types are checked by `npx tsc --noEmit` (expectTypeOf and the
 * @ts-expect-error lines fail the typecheck when a type is wrong); the rest runs.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createHost,
  defineEffect,
  type FlowState,
  failed,
  flow,
  InvalidInputError,
  succeeded,
} from "../../src/index.js";
import { memoryJournal } from "../../src/testing/index.js";

type Book = { type: "Book"; guest: string; nights: number };
const hold = defineEffect({
  kind: "hold",
  run: async (input: { nights: number }) => (input.nights > 9 ? failed("no room") : succeeded({ room: 12 })),
});
const pay = defineEffect({
  kind: "pay",
  run: async (input: { guest: string; room: number }) =>
    input.guest === "broke" ? failed("declined") : succeeded({ paid: true }),
});
const release = defineEffect({ kind: "release", run: async (_input: { room: number }) => succeeded({}) });

const booking = flow<Book>("booking")
  .effect("hold", hold, ({ start }) => ({ nights: start.nights }))
  .effect("pay", pay, ({ start, results }) => ({ guest: start.guest, room: results.hold.room }))
  .publish("booked", ({ results }) => ({ type: "Booked", source: "hotel", payload: { room: results.hold.room } }))
  .onFailure((f) =>
    f
      .effect("release", release, ({ results }) => ({ room: results.hold?.room ?? 0 }))
      .publish("refused", ({ failure }) => ({ type: "BookingRefused", source: "hotel", payload: failure })),
  )
  .build();

describe("flows: types", () => {
  it("each step's input sees the typed results of the steps before it, and nothing after", () => {
    flow<Book>("t")
      .effect("hold", hold, ({ start, results }) => {
        expectTypeOf(start).toEqualTypeOf<Book>();
        // @ts-expect-error no step has run before the first
        void results.hold;
        return { nights: start.nights };
      })
      .effect("pay", pay, ({ results }) => {
        expectTypeOf(results.hold).toEqualTypeOf<{ room: number }>();
        // @ts-expect-error a step's own result is not there yet
        void results.pay;
        return { guest: "g", room: results.hold.room };
      })
      // @ts-expect-error the input must be the effect's input
      .effect("pay2", pay, () => ({ guest: "g" }));
  });

  it("the handle of a flow takes its starting command and knows its state", () => {
    const host = createHost({ journal: memoryJournal(), actors: [booking] });
    const bookings = host.actor(booking);
    expectTypeOf(bookings.send).parameter(1).toEqualTypeOf<Book>();
    expectTypeOf(bookings.state).returns.resolves.toMatchTypeOf<{ state: FlowState<Book, unknown> }>();
  });
});

describe("flows", () => {
  const run = async (id: string, command: Book) => {
    const journal = memoryJournal();
    const host = createHost({ journal, actors: [booking], handlers: [hold, pay, release] });
    await host.start();
    await host.actor(booking).send(id, command);
    await host.drain({ timeoutMs: 5_000 });
    const { state } = await host.actor(booking).state(id);
    const rows = await journal.listOutbox({});
    const events = (await journal.readStream(`booking/${id}`, 1)).map((e) => e.type);
    await host.stop();
    return { state, rows: rows.map((r) => `${r.category} ${r.id}`).sort(), events };
  };

  it("runs its steps in order, each effect keyed by the flow's id and step", async () => {
    const { state, rows, events } = await run("1", { type: "Book", guest: "ada", nights: 2 });
    expect(state.status).toBe("Completed");
    expect(state.results).toEqual({ hold: { room: 12 }, pay: { paid: true }, booked: null });
    expect(rows).toEqual(["effect booking:1:hold", "effect booking:1:pay", "event booking:1:booked"]);
    expect(events).toEqual([
      "FlowStarted",
      "StepRequested",
      "StepCompleted",
      "StepRequested",
      "StepCompleted",
      "StepCompleted",
      "FlowCompleted",
    ]);
  });

  it("a failed step runs the failure branch, which reads the results so far and the failure", async () => {
    const { state, rows } = await run("2", { type: "Book", guest: "broke", nights: 2 });
    expect(state.status).toBe("Failed");
    expect(state.failure).toEqual({ step: "pay", error: "declined" });
    expect(rows).toEqual([
      "effect booking:2:hold",
      "effect booking:2:pay",
      "effect booking:2:release",
      "event booking:2:refused",
    ]);
  });

  it("replays from its events alone: a new host sees the same state, and a repeated start changes nothing", async () => {
    const journal = memoryJournal();
    const first = createHost({ journal, actors: [booking], handlers: [hold, pay, release] });
    await first.start();
    await first.actor(booking).send("3", { type: "Book", guest: "ada", nights: 1 });
    await first.drain({ timeoutMs: 5_000 });
    const before = await first.actor(booking).state("3");
    await first.stop();
    const second = createHost({ journal, actors: [booking] });
    expect(await second.actor(booking).state("3")).toEqual(before);
    const again = await second.actor(booking).send("3", { type: "Book", guest: "ada", nights: 1 });
    expect(again.events).toEqual([]);
    await second.stop();
  });

  it("two steps with one name are refused: a step's name is its key", () => {
    expect(() =>
      flow<Book>("dup")
        .effect("hold", hold, () => ({ nights: 1 }))
        .effect("hold", hold, () => ({ nights: 1 })),
    ).toThrow(InvalidInputError);
  });
});
