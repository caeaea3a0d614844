import { Command } from "commander";
import { beforeEach, describe, expect, it } from "vitest";
import { registerReconcileCommands } from "../../src/cli/reconcile.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { FakePaymentProvider, paymentHandler } from "./fixtures/fake-provider.js";
import { paymentActor, paymentKey } from "./fixtures/payment-actor.js";
import { World } from "./fixtures/world.js";

/** Runs the CLI commands against one journal, as the lead's main.ts does, capturing the output. */
function cli(journal: Journal) {
  const lines: string[] = [];
  return {
    lines,
    async run(...args: string[]) {
      const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      registerReconcileCommands(program, async () => journal, { out: (t) => lines.push(t) });
      await program.parseAsync(["node", "oncely", ...args]);
    },
  };
}

describe("reconcile / effects CLI", () => {
  let journal: Journal;
  let world: World;
  const key = paymentKey("77");

  beforeEach(async () => {
    journal = memoryJournal();
    const provider = new FakePaymentProvider(false).plan("charge-then-throw");
    world = new World(
      journal,
      [paymentActor],
      [paymentHandler(provider, { withLookup: false, policy: { timeoutMs: 1_000, leaseMs: 5_000 } })],
    );
    await world.node.runtime.send("order/77", { type: "RequestPayment", amount: 12 });
    await world.drain();
  });

  it("lists the queue, settles an effect, and the dispatcher records it in the owner", async () => {
    const c = cli(journal);
    await c.run("reconcile", "list");
    expect(c.lines.join("")).toContain(key);
    expect(c.lines.join("")).toContain("1 effect(s) need reconciliation");
    c.lines.length = 0;
    await c.run("reconcile", "list", "--json");
    expect(JSON.parse(c.lines[0] as string)).toMatchObject({ key, status: "Unknown", needsReconciliation: true });

    c.lines.length = 0;
    await c.run(
      "reconcile",
      "settle",
      key,
      "--succeeded",
      "--result",
      '{"id":"pay_1"}',
      "--by",
      "carol",
      "--note",
      "seen at bank",
    );
    expect(c.lines.join("")).toMatch(/settled order:77:payment as succeeded by carol/);
    await world.drain();
    const last = (await journal.readStream("order/77")).at(-1)?.data;
    expect(last).toMatchObject({ type: "PaymentCompleted", paymentId: "pay_1", via: "operator", settledBy: "carol" });

    c.lines.length = 0;
    await c.run("effects", "list", "--status", "Completed", "--json");
    expect(c.lines.map((l) => JSON.parse(l).key)).toEqual([key]);
    c.lines.length = 0;
    await c.run("reconcile", "list");
    expect(c.lines.join("")).toContain("reconciliation queue is empty");
  });

  it.each([
    [["--succeeded", "--by", "x"], /--succeeded needs --result/],
    [["--failed", "--by", "x"], /--failed needs --reason/],
    [
      ["--succeeded", "--failed", "--result", "1", "--reason", "r", "--by", "x"],
      /exactly one of --succeeded or --failed/,
    ],
    [["--failed", "--reason", "r"], /--by <operator> is required/],
    [["--succeeded", "--result", "{nope", "--by", "x"], /--result is not valid JSON/],
  ])("refuses settle %j with a clear message", async (args, message) => {
    await expect(cli(journal).run("reconcile", "settle", key, ...args)).rejects.toThrow(message);
    expect((await journal.getOutbox(key))?.status).toBe("reconcile");
  });

  it("names an unknown key and a wrong status", async () => {
    await expect(
      cli(journal).run("reconcile", "settle", "order:0:payment", "--failed", "--reason", "r", "--by", "x"),
    ).rejects.toThrow(/no effect with key "order:0:payment"/);
    await expect(cli(journal).run("effects", "list", "--status", "Done")).rejects.toThrow(/--status must be one of/);
  });
});
