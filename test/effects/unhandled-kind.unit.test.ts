import { Command } from "commander";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { registerReconcileCommands } from "../../src/cli/reconcile.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { paymentActor, paymentKey } from "./fixtures/payment-actor.js";
import { World } from "./fixtures/world.js";

describe("an effect kind no dispatcher has a handler for", () => {
  it("is warned about once, counted in a metric, and shown by `oncely effects list`", async () => {
    const journal = memoryJournal();
    const warnings: string[] = [];
    const registry = new Registry();
    const logger = {
      debug: () => {},
      info: () => {},
      error: () => {},
      warn: (_: object, msg?: string) => void warnings.push(msg ?? ""),
    };
    const w = new World(journal, [paymentActor], [], { registry, logger });
    await w.node.runtime.send("order/n1", { type: "RequestPayment", amount: 5 });
    await w.node.runtime.send("order/n2", { type: "RequestPayment", amount: 6 });
    for (let round = 0; round < 3; round++) {
      await w.node.dispatcher.runOnce();
      w.clock.advance(120_000);
    }
    const unhandled = warnings.filter((m) => m.includes('no handler registered for effect kind "payment"'));
    expect(unhandled).toHaveLength(1);
    const metric = await registry.getSingleMetricAsString("oncely_effect_unhandled_kind_total");
    expect(metric).toContain('oncely_effect_unhandled_kind_total{dispatcher="dispatcher-1",kind="payment"} 6');

    const lines: string[] = [];
    const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
    registerReconcileCommands(program, async () => journal, { out: (t) => lines.push(t) });
    await program.parseAsync(["node", "oncely", "effects", "list"]);
    const listed = lines.find((l) => l.includes(paymentKey("n1")));
    expect(listed).toMatch(/Pending .*no handler registered for effect kind "payment"/);
  });
});
