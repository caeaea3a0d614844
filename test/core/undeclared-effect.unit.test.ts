import { describe, expect, it } from "vitest";
import { CommandRejectedError, UndeclaredEffectError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { defineEffect } from "../../src/effects/define-effect.js";
import { deadline } from "../../src/effects/timer.js";
import { memoryJournal } from "../../src/journal/memory.js";

const payment = defineEffect<{ amount: number }, { paymentId: string }>({ kind: "payment" });

type Command = { type: "Pay" } | { type: "Charge" } | { type: "Remind" };

/** Declares `payment`; `Charge` asks for a kind it does not declare, which compiles: a kind is a string. */
const checkout = defineActor<{ asked: number }, Command, { type: "Asked" }, typeof payment>({
  type: "checkout",
  effects: [payment],
  initialState: () => ({ asked: 0 }),
  evolve: (state) => ({ asked: state.asked + 1 }),
  decide: (command, _state, { id, now }) => {
    switch (command.type) {
      case "Pay":
        return { events: [{ type: "Asked" }], effects: [payment.request(`checkout:${id}:payment`, { amount: 5 })] };
      case "Charge":
        return { events: [{ type: "Asked" }], effects: [{ kind: "charge", key: `checkout:${id}:charge`, input: {} }] };
      case "Remind":
        return {
          events: [{ type: "Asked" }],
          effects: [deadline({ name: "remind", key: `checkout:${id}:remind`, at: now + 60_000 })],
        };
      default:
        return {};
    }
  },
});

/** The same actor with no declaration: any kind, as before declarations existed. */
const { effects: _none, ...undeclared } = checkout;

const setup = (actor = checkout) => {
  const journal = memoryJournal();
  return { journal, runtime: createRuntime({ journal, actors: [actor], ids: sequentialIds("ud") }) };
};

describe("an actor that declares its effects", () => {
  it("is refused at decision time when it requests another kind, naming the actor and the kind; nothing is committed", async () => {
    const { journal, runtime } = setup();
    const error = await runtime.send("checkout/1", { type: "Charge" }, { messageId: "m1" }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(UndeclaredEffectError);
    expect(error).toBeInstanceOf(CommandRejectedError); // terminal: a rejected ack, a dead outcome row
    expect((error as Error).message).toBe(
      'decide of actor "checkout" (checkout/1) requested effect kind "charge", which the actor does not declare ' +
        "(declared: payment): add it to the actor's effects",
    );
    expect(await journal.streamVersion("checkout/1")).toBe(0);
    expect(await journal.listOutbox()).toEqual([]);
    expect(await journal.getInbox("checkout/1", "m1")).toBeUndefined();
  });

  it("requests its declared kinds and durable timers", async () => {
    const { journal, runtime } = setup();
    await runtime.send("checkout/1", { type: "Pay" });
    await runtime.send("checkout/1", { type: "Remind" });
    expect((await journal.listOutbox()).map((row) => row.kind).sort()).toEqual(["oncely.timer", "payment"]);
  });
});

it("an actor that declares no effects may request any kind", async () => {
  const { journal, runtime } = setup(undeclared);
  await runtime.send("checkout/1", { type: "Charge" });
  expect((await journal.listOutbox()).map((row) => row.kind)).toEqual(["charge"]);
});
