import { describe, expect, it } from "vitest";
import { IdempotencyKeyReusedError } from "../../src/errors.js";
import {
  createHost,
  defineActor,
  defineEffect,
  type EffectLookup,
  type EffectStatus,
  lookupMatching,
  type OutcomeOf,
  Reconciliation,
  succeeded,
} from "../../src/index.js";
import { memoryJournal, SimulatedClock } from "../../src/testing/index.js";

// A provider keeps one record per key, but the record under a key may be another request's: the
// key was used before for another customer (the provider answered 409). A lookup that believed the
// key alone would record that customer's charge as this one's. Compared with the effect's input,
// it never completes the effect: it stays Unknown and goes to the reconciliation queue, saying why.

interface Charge {
  id: string;
  customer: string;
  amount: number;
}
type ChargeInput = { customer: string; amount: number };

function world(ledger: Map<string, Charge>, lookup: "matching" | "unchecked") {
  const journal = memoryJournal();
  const clock = new SimulatedClock();
  const find = async (key: string) => ledger.get(key);
  const charge = defineEffect({
    kind: "charge",
    policy: {
      providerDedups: false,
      lookupAttempts: 2,
      lookupBackoff: { initialMs: 10, maxMs: 10, multiplier: 1, jitter: 0 },
    },
    // The provider refuses the key: it went through before with another body.
    run: async (_input: ChargeInput): Promise<never> => {
      throw new IdempotencyKeyReusedError("sub:s1:charge", "409 from the provider");
    },
    lookup:
      lookup === "matching"
        ? lookupMatching({
            find: (key) => find(key),
            matches: (found, input) => found.customer === input.customer && found.amount === input.amount,
            outcome: (found) => succeeded({ chargeId: found.id }),
          })
        : // What a JavaScript user might still write: no comparison, no `matches` in the answer.
          ((async (key: string) => {
            const found = await find(key);
            return found ? succeeded({ chargeId: found.id }) : { outcome: "not-found" };
          }) as never),
  });
  const subscription = defineActor<{ charge: EffectStatus }, { type: "Start" }, { type: string }, typeof charge>({
    type: "sub",
    effects: [charge],
    initialState: () => ({ charge: "NotRequested" }),
    evolve: (_s, e) => ({
      charge: e.type === "oncely.effect.succeeded" ? "Completed" : e.type === "Requested" ? "Pending" : "Unknown", // oncely.effect.unknown, then needs-reconciliation
    }),
    decide: (command: { type: "Start" } | OutcomeOf<typeof charge>, state, { id }) =>
      command.type === "Start"
        ? state.charge === "NotRequested"
          ? {
              events: [{ type: "Requested" }],
              effects: [charge.request(`sub:${id}:charge`, { customer: "ann", amount: 50 })],
            }
          : {}
        : { events: [{ type: command.type }] },
  });
  const host = createHost({ journal, clock, actors: [subscription], handlers: [charge] });
  const settle = async () => {
    for (let i = 0; i < 20; i++) {
      await host.dispatcher.runOnce();
      clock.advance(1_000);
    }
  };
  const state = async () => (await host.state<{ charge: EffectStatus }>("sub/s1")).state.charge;
  return { journal, host, settle, state };
}

const bobsCharge: Charge = { id: "ch_bob", customer: "bob", amount: 70 };

describe("a lookup compares what it found with the effect's input", () => {
  it("never completes the effect with another customer's record: it goes to reconciliation, saying what differs", async () => {
    const w = world(new Map([["sub:s1:charge", bobsCharge]]), "matching");
    await w.host.send("sub/s1", { type: "Start" });
    await w.settle();
    expect(await w.state()).toBe("Unknown");
    const row = await w.journal.getOutbox("sub:s1:charge");
    expect(row?.status).toBe("reconcile");
    expect(row?.lastError).toContain('lookup of effect "charge" found a record for another input');
    expect(row?.lastError).toContain('"customer":"bob"');
    const queue = await new Reconciliation({ journal: w.journal }).list();
    expect(queue.map((item) => item.key)).toEqual(["sub:s1:charge"]);
    await w.host.stop();
  });

  it("completes it when the record is this effect's", async () => {
    const w = world(new Map([["sub:s1:charge", { id: "ch_ann", customer: "ann", amount: 50 }]]), "matching");
    await w.host.send("sub/s1", { type: "Start" });
    await w.settle();
    expect(await w.state()).toBe("Completed");
    await w.host.stop();
  });

  it("refuses a lookup answer that does not say whether the record matches (untyped code): reconciliation", async () => {
    const w = world(new Map([["sub:s1:charge", bobsCharge]]), "unchecked");
    await w.host.send("sub/s1", { type: "Start" });
    await w.settle();
    expect(await w.state()).toBe("Unknown");
    const row = await w.journal.getOutbox("sub:s1:charge");
    expect(row?.status).toBe("reconcile");
    expect(row?.lastError).toContain("without comparing it with the effect's input");
    await w.host.stop();
  });

  it("is what the type asks for: a lookup by key alone does not compile", () => {
    const byKeyAlone = async (key: string) => succeeded({ chargeId: key });
    // @ts-expect-error a found record must say whether it `matches` the input (lookupMatching writes it)
    const lookup: EffectLookup<ChargeInput, { chargeId: string }> = byKeyAlone;
    expect(typeof lookup).toBe("function");
  });
});
