/**
 * A flow's generated events are upcast like any actor's: release 2 of a renewal flow changed the
 * charge's result from `{ id }` to `{ chargeId }`, so its `StepCompleted` is at version 2 with a step
 * that reads release 1's. A journal written by release 1 replays to the state release 2 reaches by
 * itself, a flow release 1 left half done finishes reading the upcast result, and release 1 refuses
 * what release 2 wrote.
 */
import { describe, expect, it } from "vitest";
import { VersionTooNewError } from "../../src/errors.js";
import {
  createHost,
  defineEffect,
  type FlowActor,
  type FlowEvent,
  flow,
  type Journal,
  succeeded,
} from "../../src/index.js";
import { memoryJournal, SimulatedClock } from "../../src/testing/index.js";

type Renew = { type: "Renew"; customer: string; amount: number };
const renew: Renew = { type: "Renew", customer: "ada", amount: 900 };

const charged: string[] = [];
const chargeV1 = defineEffect({
  kind: "charge",
  run: async (input: { customer: string; amount: number }) => {
    charged.push(input.customer);
    return succeeded({ id: `ch_${input.customer}` });
  },
});
const chargeV2 = defineEffect({
  kind: "charge",
  run: async (input: { customer: string; amount: number }) => {
    charged.push(input.customer);
    return succeeded({ chargeId: `ch_${input.customer}` });
  },
});
const receipt = defineEffect({
  kind: "receipt",
  run: async (input: { to: string; chargeId: string }) => succeeded({ mailId: `mail_for_${input.chargeId}` }),
});

const release1 = flow<Renew>("renewal", { snapshot: { every: 2, schemaVersion: 1 } })
  .effect("charge", chargeV1, ({ start }) => ({ customer: start.customer, amount: start.amount }))
  .effect("receipt", receipt, ({ start, results }) => ({ to: start.customer, chargeId: results.charge.id }))
  .publish("renewed", ({ results }) => ({ type: "Renewed", source: "billing", payload: { charge: results.charge.id } }))
  .build();

type StepCompletedV1 = Extract<FlowEvent, { type: "StepCompleted" }>;
const release2Options = {
  // Release 1's snapshots hold the old result shape: a new schemaVersion ignores them (full replay, upcast).
  snapshot: { every: 2, schemaVersion: 2 },
  events: {
    StepCompleted: {
      version: 2,
      upcast: {
        1: (event: StepCompletedV1): StepCompletedV1 =>
          event.step === "charge" ? { ...event, result: { chargeId: (event.result as { id: string }).id } } : event,
      },
    },
  },
};
const release2 = (options: { upcast: boolean }) =>
  flow<Renew>("renewal", options.upcast ? release2Options : { snapshot: release2Options.snapshot })
    .effect("charge", chargeV2, ({ start }) => ({ customer: start.customer, amount: start.amount }))
    .effect("receipt", receipt, ({ start, results }) => ({ to: start.customer, chargeId: results.charge.chargeId }))
    .publish("renewed", ({ results }) => ({
      type: "Renewed",
      source: "billing",
      payload: { charge: results.charge.chargeId },
    }))
    .build();

/** One clock per journal: the releases that share a journal live on one timeline. */
const clocks = new WeakMap<Journal, SimulatedClock>();

/**
 * Start the flow `id` (unless `start` is false) under `actor` with `handlers` on `journal`, run its
 * dispatcher turn by turn on a simulated clock (a row another release backed off is due again a
 * minute later), and return its state.
 */
async function run(journal: Journal, actor: FlowActor<Renew, unknown>, handlers: object[], id: string, start = true) {
  const clock = clocks.get(journal) ?? new SimulatedClock();
  clocks.set(journal, clock);
  const host = createHost({ journal, clock, actors: [actor], handlers: handlers as never });
  if (start) await host.send(`renewal/${id}`, renew, { messageId: `renew-${id}` });
  for (let turn = 0; turn < 10; turn++) {
    await host.dispatcher.runOnce();
    clock.advance(60_000);
  }
  const { state } = await host.state(`renewal/${id}`);
  await host.stop();
  return state;
}

describe("a flow's events, upcast", () => {
  it("a journal of release 1 replays under release 2 to the state release 2 reaches by itself", async () => {
    const journal = memoryJournal();
    await run(journal, release1, [chargeV1, receipt], "old");
    const native = await run(memoryJournal(), release2({ upcast: true }), [chargeV2, receipt], "new");
    expect(native).toMatchObject({ status: "Completed", results: { charge: { chargeId: "ch_ada" } } });

    const host = createHost({ journal, actors: [release2({ upcast: true })] });
    expect((await host.state("renewal/old")).state).toEqual(native);
    await host.stop();
    // Without the upcaster release 2 reads release 1's result as it was stored: not the state it reaches.
    const plain = createHost({ journal, actors: [release2({ upcast: false })] });
    expect((await plain.state("renewal/old")).state).not.toEqual(native);
    await plain.stop();
  });

  it("a flow release 1 left between its steps finishes under release 2, which reads the upcast result", async () => {
    const journal = memoryJournal();
    charged.length = 0;
    // Release 1 charges; no receipt handler runs before its process is replaced.
    const half = await run(journal, release1, [chargeV1], "mid");
    expect(half).toMatchObject({ status: "Running", waiting: "receipt", results: { charge: { id: "ch_ada" } } });
    const done = await run(journal, release2({ upcast: true }), [chargeV2, receipt], "mid", false);
    expect(done).toMatchObject({
      status: "Completed",
      results: { charge: { chargeId: "ch_ada" }, receipt: { mailId: "mail_for_ch_ada" } },
    });
    expect(charged).toEqual(["ada"]); // the finished charge is not run again
    // Release 2's publish step read release 1's charge result, upcast.
    const published = await journal.getOutbox("renewal:mid:renewed");
    expect(published?.payload).toMatchObject({ payload: { charge: "ch_ada" } });
  });

  it("release 1 refuses what release 2 wrote: a newer version is left to a newer worker", async () => {
    const journal = memoryJournal();
    await run(journal, release2({ upcast: true }), [chargeV2, receipt], "v2");
    const host = createHost({ journal, actors: [release1] });
    await expect(host.state("renewal/v2")).rejects.toThrow(VersionTooNewError);
    await host.stop();
  });
});
