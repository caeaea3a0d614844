/**
 * The types of the flow builder, checked by `npx tsc --noEmit`: each expectTypeOf fails the typecheck
 * when a type is wrong, and each @ts-expect-error fails it when the line it marks compiles (so a
 * builder that let a wrong result field through would fail here). The runtime part is a smoke test.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { defineEffect, type FlowActor, type FlowState, flow, type StepContext, succeeded } from "../../src/index.js";

type Renew = { type: "Renew"; customer: string; amount: number };
const charge = defineEffect<{ customer: string; amount: number }, { chargeId: string; fee: number }>({
  kind: "charge",
});
const receipt = defineEffect({
  kind: "receipt",
  run: async (input: { to: string; chargeId: string }) => succeeded({ mailId: `m_${input.chargeId}` }),
});
const refund = defineEffect<{ chargeId: string }, { refundId: string }>({ kind: "refund" });

describe("flow builder: types", () => {
  it("a step's typed result is available to the next step, with its fields' types", () => {
    flow<Renew>("t")
      .effect("charge", charge, ({ start }) => ({ customer: start.customer, amount: start.amount }))
      .effect("receipt", receipt, ({ results }) => {
        expectTypeOf(results.charge).toEqualTypeOf<{ chargeId: string; fee: number }>();
        expectTypeOf(results.charge.fee).toBeNumber();
        return { to: "a", chargeId: results.charge.chargeId };
      })
      .publish("renewed", ({ results }) => {
        expectTypeOf(results).toEqualTypeOf<
          Record<never, never> & { charge: { chargeId: string; fee: number } } & { receipt: { mailId: string } }
        >();
        return { type: "Renewed", source: "billing", payload: results.receipt.mailId };
      });
  });

  it("a wrong result field, or a field used as the wrong type, is a type error", () => {
    flow<Renew>("t")
      .effect("charge", charge, ({ start }) => ({ customer: start.customer, amount: start.amount }))
      .effect("receipt", receipt, ({ results }) => ({
        to: "a",
        // @ts-expect-error the charge's result has no field `id` (it is `chargeId`)
        chargeId: results.charge.id,
      }))
      .effect("receipt2", receipt, ({ results }) => ({
        to: "a",
        // @ts-expect-error `fee` is a number, the receipt wants a string
        chargeId: results.charge.fee,
      }))
      // @ts-expect-error a result of a step that does not exist
      .publish("p", ({ results }) => ({ type: "P", source: "s", payload: results.refund.refundId }));
  });

  it("a starting command's wrong field is a type error; a schema's output is the starting command", () => {
    flow<Renew>("t")
      // @ts-expect-error the command has no field `amountMinor`
      .effect("charge", charge, ({ start }) => ({ customer: start.customer, amount: start.amountMinor }));
    const schema = z.object({ type: z.literal("Renew"), customer: z.string(), amount: z.number() });
    flow("t", { commands: schema }).effect("charge", charge, (context) => {
      expectTypeOf(context).toEqualTypeOf<StepContext<z.infer<typeof schema>, Record<never, never>>>();
      return { customer: context.start.customer, amount: context.start.amount };
    });
  });

  it("the failure branch sees the results so far as possibly missing, and which step failed", () => {
    flow<Renew>("t")
      .effect("charge", charge, ({ start }) => ({ customer: start.customer, amount: start.amount }))
      .onFailure((f) =>
        f.effect("refund", refund, ({ results, failure }) => {
          expectTypeOf(failure).toEqualTypeOf<{ step: string; error: string }>();
          expectTypeOf(results.charge).toEqualTypeOf<{ chargeId: string; fee: number } | undefined>();
          // @ts-expect-error the charge may not have finished: its result may be missing
          const id: string = results.charge.chargeId;
          return { chargeId: results.charge?.chargeId ?? id };
        }),
      );
  });

  it("the built flow is an actor whose state holds the typed results", () => {
    const built = flow<Renew>("t")
      .effect("charge", charge, ({ start }) => ({ customer: start.customer, amount: start.amount }))
      .effect("receipt", receipt, ({ results }) => ({ to: "a", chargeId: results.charge.chargeId }))
      .build();
    type Results = Record<never, never> & { charge: { chargeId: string; fee: number } } & {
      receipt: { mailId: string };
    };
    expectTypeOf(built).toEqualTypeOf<FlowActor<Renew, Results>>();
    const state = built.initialState("x");
    expectTypeOf(state).toEqualTypeOf<FlowState<Renew, Results>>();
    expectTypeOf(state.results.charge).toEqualTypeOf<{ chargeId: string; fee: number } | undefined>();
    // @ts-expect-error no step is named `refund`
    void state.results.refund;
    expect(state.status).toBe("NotStarted");
  });
});
