import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { RetryableError } from "../../src/base/errors.js";
import { registerReconcileCommands } from "../../src/cli/reconcile.js";
import { type EffectHandler, succeeded } from "../../src/effects/types.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { paymentActor, paymentKey } from "../effects/fixtures/payment-actor.js";
import { World } from "../effects/fixtures/world.js";

function cli(journal: Journal) {
  const lines: string[] = [];
  return {
    lines,
    text: () => lines.join(""),
    async run(...args: string[]) {
      const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      registerReconcileCommands(program, async () => journal, { out: (t) => lines.push(t) });
      await program.parseAsync(["node", "oncely", ...args]);
    },
  };
}

describe("`oncely reconcile` and an effect whose retries were exhausted", () => {
  it("lists it with why it waits, and `reconcile retry` runs it again with the same key", async () => {
    const journal = memoryJournal();
    let limited = 3;
    const payment: EffectHandler<{ amount: number }, { id: string }> = {
      kind: "payment",
      policy: {
        notPerformedMaxAttempts: 3,
        backoff: { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 0 },
      },
      async run() {
        if (limited-- > 0) throw new RetryableError("429 rate limited");
        return succeeded({ id: "pay_9" });
      },
    };
    const w = new World(journal, [paymentActor], [payment]);
    await w.node.runtime.send("order/r1", { type: "RequestPayment", amount: 3 });
    await w.drain();

    const c = cli(journal);
    await c.run("reconcile", "list");
    expect(c.text()).toContain(
      `${paymentKey("r1")}  payment  order/r1  attempts=3  ` +
        "last error: retries exhausted after 3 attempts: not performed: RetryableError: 429 rate limited  " +
        "cause=retries-exhausted (never performed)",
    );
    c.lines.length = 0;
    await c.run("reconcile", "list", "--json");
    expect(JSON.parse(c.lines[0] as string)).toMatchObject({
      key: paymentKey("r1"),
      cause: "retries-exhausted",
      neverPerformed: true,
      lastError: "retries exhausted after 3 attempts: not performed: RetryableError: 429 rate limited",
    });

    await expect(c.run("reconcile", "retry", paymentKey("r1"))).rejects.toThrow(/--by <operator> is required/);
    c.lines.length = 0;
    await c.run("reconcile", "retry", paymentKey("r1"), "--by", "ada", "--note", "limit raised");
    expect(c.text()).toContain(`retrying ${paymentKey("r1")} by ada`);
    await w.drain();
    expect((await journal.readStream("order/r1")).at(-1)?.data).toMatchObject({
      type: "PaymentCompleted",
      paymentId: "pay_9",
    });
    c.lines.length = 0;
    await c.run("reconcile", "list");
    expect(c.text()).toContain("reconciliation queue is empty");
  });
});
