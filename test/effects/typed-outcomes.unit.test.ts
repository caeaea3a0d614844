/**
 * The types of typed effects, checked by `npx tsc --noEmit` (expectTypeOf and the @ts-expect-error
 * lines fail the typecheck when a type is wrong); the runtime assertions are a smoke test.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { defineActor } from "../../src/core/actor.js";
import type {
  DecideContext,
  Decision,
  EffectOutcome,
  EffectOutcomeOf,
  EffectRequest,
  MessageOutcome,
  OutcomeOf,
} from "../../src/core/decider.js";
import { defineEffect } from "../../src/effects/define-effect.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { type EffectHandler, succeeded } from "../../src/effects/types.js";
import { charge, receipt, type renewalActor } from "./fixtures/typed-actor.js";

type Count = { type: "Increment" };
type Counted = { type: "Incremented" };

const counter = defineActor<number, Count, Counted>({
  type: "counter",
  initialState: () => 0,
  evolve: (n) => n + 1,
  // No effects, no messages: no outcome in the command, so no default branch is needed.
  decide: (command) => {
    switch (command.type) {
      case "Increment":
        return { events: [{ type: "Incremented" }] };
    }
  },
});

describe("typed effects: types", () => {
  it("an actor that requests nothing sees only its own commands", () => {
    expectTypeOf<Parameters<typeof counter.decide>[0]>().toEqualTypeOf<Count>();
  });

  it("an actor sees the outcomes of exactly the effects it declares, and message outcomes only with messages", () => {
    type Renewal = Parameters<typeof renewalActor.decide>[0];
    expectTypeOf<Renewal>().toEqualTypeOf<
      { type: "Renew"; customer: string; amount: number } | OutcomeOf<typeof charge> | OutcomeOf<typeof receipt>
    >();
    expectTypeOf<Extract<Renewal, MessageOutcome>>().toBeNever();
    const sender = defineActor<null, Count, Counted, never, true>({
      type: "sender",
      messages: true,
      initialState: () => null,
      evolve: (s) => s,
      decide: () => ({}),
    });
    expectTypeOf<Parameters<typeof sender.decide>[0]>().toEqualTypeOf<Count | MessageOutcome>();
  });

  it("kind, input and result are inferred from the declaration", () => {
    expectTypeOf(charge.kind).toEqualTypeOf<"charge">();
    expectTypeOf<OutcomeOf<typeof charge>>().toEqualTypeOf<
      EffectOutcomeOf<"charge", { customer: string; amount: number }, { chargeId: string }>
    >();
    type Succeeded = Extract<OutcomeOf<typeof charge>, { type: "oncely.effect.succeeded" }>;
    expectTypeOf<Succeeded["input"]>().toEqualTypeOf<{ customer: string; amount: number }>();
    expectTypeOf<Succeeded["result"]>().toEqualTypeOf<{ chargeId: string }>();
    expectTypeOf<Extract<OutcomeOf<typeof charge>, { type: "oncely.effect.unknown" }>["input"]>().toEqualTypeOf<{
      customer: string;
      amount: number;
    }>();
    expectTypeOf(charge.request("k", { customer: "a", amount: 1 })).toEqualTypeOf<
      EffectRequest<"charge", { customer: string; amount: number }>
    >();
    // @ts-expect-error the input is typed
    charge.request("k", { customer: "a" });

    // From run alone: the input from its parameter, the result from what it returns.
    const ping = defineEffect({
      kind: "ping",
      run: async (input: { host: string }) => succeeded({ ms: input.host.length }),
    });
    expectTypeOf<Extract<OutcomeOf<typeof ping>, { type: "oncely.effect.succeeded" }>>().toMatchObjectType<{
      kind: "ping";
      input: { host: string };
      result: { ms: number };
    }>();
    // Explicit input and result types: the kind is then a string.
    const mail = defineEffect<{ to: string }, { id: string }>({ kind: "mail", input: z.object({ to: z.string() }) });
    expectTypeOf(mail.kind).toEqualTypeOf<string>();
  });

  it("switching on type, then kind, is exhaustive without a default branch", () => {
    type C = Count | OutcomeOf<typeof charge | typeof receipt>;
    function decide(command: C): Decision<Counted> {
      switch (command.type) {
        case "Increment":
          return {};
        case "oncely.effect.succeeded":
          return onSucceeded(command);
        case "oncely.effect.failed":
        case "oncely.effect.unknown":
        case "oncely.effect.needs-reconciliation":
          return {};
      }
    }
    function onSucceeded(command: Extract<C, { type: "oncely.effect.succeeded" }>): Decision<Counted> {
      switch (command.kind) {
        case "charge":
          expectTypeOf(command.result).toEqualTypeOf<{ chargeId: string }>();
          return {};
        case "receipt":
          expectTypeOf(command.input.to).toBeString();
          return {};
      }
    }
    // @ts-expect-error a kind left out is a missing return: the switch is not exhaustive
    function missingKind(command: Extract<C, { type: "oncely.effect.succeeded" }>): Decision<Counted> {
      switch (command.kind) {
        case "charge":
          return {};
      }
    }
    // @ts-expect-error an outcome type left out is a missing return, too
    function missingType(command: C): Decision<Counted> {
      switch (command.type) {
        case "Increment":
        case "oncely.effect.succeeded":
        case "oncely.effect.failed":
        case "oncely.effect.unknown":
          return {};
      }
    }
    expect([decide, missingKind, missingType].length).toBe(3);
  });

  it("the untyped forms still work: C | EffectOutcome, handler objects, declared effects as handlers", () => {
    const legacy = defineActor<null, Count | EffectOutcome, Counted>({
      type: "legacy",
      initialState: () => null,
      evolve: (s) => s,
      decide: (command, _s, _c: DecideContext) => (command.type === "oncely.effect.succeeded" ? {} : {}),
    });
    expectTypeOf<Parameters<typeof legacy.decide>[0]>().toEqualTypeOf<Count | EffectOutcome>();
    // A typed outcome is an untyped one.
    expectTypeOf<OutcomeOf<typeof charge>>().toExtend<EffectOutcome>();
    const implemented = charge.implement({ run: async () => succeeded({ chargeId: "c" }) });
    expectTypeOf(implemented).toExtend<EffectHandler<{ customer: string; amount: number }, { chargeId: string }>>();
    // @ts-expect-error a declared effect without run is not a handler
    expectTypeOf(receipt).toExtend<EffectHandler>();
    expect(Dispatcher).toBeDefined();
  });
});
