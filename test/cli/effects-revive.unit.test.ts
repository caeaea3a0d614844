import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerReconcileCommands } from "../../src/cli/reconcile.js";
import { OPERATOR_ACTIONS, type OperatorAction } from "../../src/console/audit.js";
import { EffectNotFoundError } from "../../src/errors.js";
import {
  createHost,
  defineActor,
  type EffectStatus,
  InvalidInputError,
  type Journal,
  succeeded,
} from "../../src/index.js";
import { memoryJournal } from "../../src/testing/index.js";

/**
 * An owner whose first release forgot to handle the payment's outcome (decide returns nothing),
 * so the outcome's row goes dead; `fixed` stands for the next deploy.
 */
const release = { fixed: false };
const order = defineActor<{ payment: EffectStatus }, { type: "Pay" }, { type: "Paid" } | { type: "Requested" }>({
  type: "order",
  initialState: () => ({ payment: "NotRequested" }),
  evolve: (_state, event) => ({ payment: event.type === "Paid" ? "Completed" : "Pending" }),
  decide: (command, state, { id }) => {
    if (command.type === "Pay") {
      if (state.payment !== "NotRequested") return {};
      return { events: [{ type: "Requested" }], effects: [{ kind: "payment", key: `order:${id}:payment`, input: {} }] };
    }
    if (command.type === "oncely.effect.succeeded" && release.fixed) return { events: [{ type: "Paid" }] };
    return undefined as never; // the bug: no decision
  },
});

function world() {
  const journal = memoryJournal();
  let charges = 0;
  const host = createHost({
    journal,
    actors: [order],
    handlers: [{ kind: "payment", policy: { providerDedups: true }, run: async () => succeeded({ n: ++charges }) }],
  });
  const lines: string[] = [];
  const run = (...args: string[]) => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
    registerReconcileCommands(program, async () => journal as Journal, { out: (t) => lines.push(t) });
    return program.parseAsync(["node", "oncely", ...args]);
  };
  return { journal, host, lines, run, charges: () => charges };
}

describe("oncely effects revive", () => {
  it("puts a dead effect back: its known outcome reaches the fixed owner, with no second run, and who did it is recorded", async () => {
    release.fixed = false;
    const w = world();
    await w.host.send("order/1", { type: "Pay" });
    await w.host.dispatcher.runOnce();
    expect((await w.journal.getOutbox("order:1:payment"))?.status).toBe("dead");

    release.fixed = true; // the fix is deployed
    await w.run("effects", "revive", "order:1:payment", "--by", "alice", "--note", "decide fixed in v2");
    expect(w.lines.join("")).toContain("revived order:1:payment (payment, owner order/1) by alice");
    expect((await w.journal.getOutbox("order:1:payment"))?.status).toBe("pending");

    await w.host.dispatcher.runOnce();
    expect((await w.host.state<{ payment: EffectStatus }>("order/1")).state.payment).toBe("Completed");
    expect((await w.journal.getOutbox("order:1:payment"))?.status).toBe("done");
    expect(w.charges()).toBe(1); // the outcome was kept on the row: the provider was not called again

    const [record] = await w.journal.listDocuments(OPERATOR_ACTIONS);
    expect(record?.doc).toMatchObject({
      action: "revive",
      target: "order:1:payment",
      outcome: "revived",
      via: "cli",
      by: "alice",
      note: "decide fixed in v2",
    } satisfies Partial<OperatorAction>);
    expect((record?.doc as OperatorAction | undefined)?.previousError).toMatch(
      /owner rejected the outcome.*NoDecision|returned no decision/i,
    );
    await w.host.stop();
  });

  it("refuses without --by, a key that is not dead, and an unknown key, naming each", async () => {
    release.fixed = false;
    const w = world();
    await w.host.send("order/2", { type: "Pay" });
    await expect(w.run("effects", "revive", "order:2:payment", "--by", "bob")).rejects.toThrow(
      /effect "order:2:payment" is not dead \(its outbox status is "pending"\)/,
    );
    await w.host.dispatcher.runOnce();
    await expect(w.run("effects", "revive", "order:2:payment")).rejects.toThrow(InvalidInputError);
    await expect(w.run("effects", "revive", "order:2:payment")).rejects.toThrow(/--by <operator> is required/);
    await expect(w.run("effects", "revive", "order:2:payment", "--by", "  ")).rejects.toThrow(/--by must not be empty/);
    await expect(w.run("effects", "revive", "nope", "--by", "bob")).rejects.toThrow(EffectNotFoundError);
    expect(await w.journal.listDocuments(OPERATOR_ACTIONS)).toEqual([]);
    await w.host.stop();
  });
});
