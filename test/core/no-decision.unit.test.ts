import { describe, expect, it } from "vitest";
import { NoDecisionError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import type { EffectOutcome } from "../../src/core/decider.js";
import { Runtime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { World } from "../effects/fixtures/world.js";

type Command = { type: "Charge" } | { type: "Forget" } | EffectOutcome;

/** Handles its own command but forgets an effect outcome: `decide` falls off the switch. */
const forgetful = defineActor<{ charged: boolean }, Command, { type: "ChargeRequested" }>({
  type: "forgetful",
  initialState: () => ({ charged: false }),
  evolve: (_state, _event) => ({ charged: true }),
  // @ts-expect-error: returning nothing is what the rule guards against at run time
  decide(command) {
    if (command.type === "Charge") {
      return { events: [{ type: "ChargeRequested" }], effects: [{ key: "charge:1", kind: "charge", input: {} }] };
    }
  },
});

describe("decide returning nothing", () => {
  it("is a terminal error naming the actor and the command", async () => {
    const runtime = new Runtime({ journal: memoryJournal(), actors: [forgetful] });
    const sent = runtime.send("forgetful/a", { type: "Forget" });
    await expect(sent).rejects.toBeInstanceOf(NoDecisionError);
    await expect(runtime.send("forgetful/a", { type: "Forget" })).rejects.toThrow(/"forgetful".*"Forget"/);
  });

  it("an effect outcome the actor does not handle is rejected once and the row goes dead, not retried forever", async () => {
    const calls: string[] = [];
    const charge = {
      kind: "charge",
      policy: { providerDedups: true },
      run: async (_: unknown, { idempotencyKey }: { idempotencyKey: string }) => {
        calls.push(idempotencyKey);
        return { outcome: "succeeded" as const, result: { id: "c1" } };
      },
    };
    const w = new World(memoryJournal(), [forgetful], [charge]);
    await w.node.runtime.send("forgetful/a", { type: "Charge" });
    await w.drain();
    expect(calls).toEqual(["charge:1"]);
    const row = await w.journal.getOutbox("charge:1");
    expect(row?.status).toBe("dead");
    expect(row?.lastError).toMatch(/NoDecisionError.*"forgetful".*"oncely\.effect\.succeeded"/);
    expect(await w.node.dispatcher.runOnce()).toBe(0);
  });
});
