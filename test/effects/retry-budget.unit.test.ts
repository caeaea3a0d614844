import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RetryableError } from "../../src/base/errors.js";
import { EffectNotRetryableError } from "../../src/effects/errors.js";
import { Reconciliation } from "../../src/effects/reconciliation.js";
import { type EffectHandler, type EffectPolicy, notPerformed, succeeded } from "../../src/effects/types.js";
import { getEffect } from "../../src/effects/view.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { type PaymentState, paymentActor, paymentKey } from "./fixtures/payment-actor.js";
import { World } from "./fixtures/world.js";

// A provider that keeps answering "not performed" (429 / 503 before acting, or a thrown
// RetryableError) is retried with the same key on a capped exponential backoff, within a budget
// of attempts and of time; past it the effect escalates once to the reconciliation queue.

type Answer = () => Promise<unknown>;
const rateLimited: Answer = async () => {
  throw new RetryableError("429 rate limited");
};

/** A payment handler whose provider does not dedup; records the clock time of every run. */
function scripted(world: () => World, policy: Partial<EffectPolicy>, answers: Answer[], fallback = rateLimited) {
  const runs: number[] = [];
  const keys: string[] = [];
  const handler: EffectHandler<{ amount: number }, { id: string }> = {
    kind: "payment",
    policy: { providerDedups: false, backoff: { initialMs: 100, maxMs: 400, multiplier: 2, jitter: 0 }, ...policy },
    async run(_input, { idempotencyKey }) {
      runs.push(world().clock.now());
      keys.push(idempotencyKey);
      return (answers.shift() ?? fallback)() as never;
    },
  };
  return { handler, runs, keys };
}

function observed() {
  const warnings: { obj: object; msg: string }[] = [];
  const registry = new Registry();
  const logger = {
    debug: () => {},
    info: () => {},
    error: () => {},
    warn: (obj: object, msg?: string) => void warnings.push({ obj, msg: msg ?? "" }),
  };
  const escalations = async () =>
    (await registry.getSingleMetric("oncely_effect_escalations_total")?.get())?.values.map((v) => ({
      labels: v.labels,
      value: v.value,
    })) ?? [];
  return { warnings, registry, logger, escalations };
}

async function setUp(policy: Partial<EffectPolicy>, answers: Answer[] = [], fallback?: Answer) {
  const obs = observed();
  let world: World | undefined;
  const script = scripted(() => world as World, policy, answers, fallback);
  world = new World(memoryJournal(), [paymentActor], [script.handler], {
    logger: obs.logger,
    registry: obs.registry,
  });
  await world.node.runtime.send("order/o1", { type: "RequestPayment", amount: 10 });
  return { w: world, ...script, ...obs };
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

describe("retries of a not-performed effect", () => {
  it("back off exponentially up to the cap, stop after notPerformedMaxAttempts, and escalate once", async () => {
    const { w, runs, keys, warnings, escalations } = await setUp({
      notPerformedMaxAttempts: 6,
      notPerformedMaxAgeMs: null,
    });
    await w.drain();
    expect(keys).toEqual(Array(6).fill(paymentKey("o1")));
    expect(gaps(runs)).toEqual([100, 200, 400, 400, 400]);

    const row = await w.journal.getOutbox(paymentKey("o1"));
    expect(row?.status).toBe("reconcile");
    expect(row?.lastError).toBe("retries exhausted after 6 attempts: not performed: RetryableError: 429 rate limited");
    const escalated = warnings.filter((w) => w.msg === "effect needs reconciliation");
    expect(escalated).toHaveLength(1);
    expect(escalated[0]?.obj).toMatchObject({ key: paymentKey("o1"), escalation: "max-attempts", attempts: 6 });
    expect(await escalations()).toEqual([{ labels: { kind: "payment", reason: "max-attempts" }, value: 1 }]);

    const queue = await new Reconciliation({ journal: w.journal }).list();
    expect(queue).toEqual([
      expect.objectContaining({
        key: paymentKey("o1"),
        cause: "retries-exhausted",
        neverPerformed: true,
        attempts: 6,
        lastError: row?.lastError,
      }),
    ]);
    // The owner hears it once, as any effect sent to the queue.
    expect(await w.events("order/o1")).toEqual(["PaymentRequested", "PaymentNeedsReconciliation"]);

    // Nothing runs it again by itself, however long the dispatcher keeps going.
    w.clock.advance(24 * 60 * 60_000);
    expect(await w.node.dispatcher.runOnce()).toBe(0);
    expect(runs).toHaveLength(6);
    expect(warnings.filter((w) => w.msg === "effect needs reconciliation")).toHaveLength(1);
    expect(await escalations()).toEqual([{ labels: { kind: "payment", reason: "max-attempts" }, value: 1 }]);
  });

  it("escalate when the next retry would start past notPerformedMaxAgeMs", async () => {
    const { w, runs, escalations } = await setUp({ notPerformedMaxAttempts: 1_000, notPerformedMaxAgeMs: 1_000 });
    await w.drain();
    // Runs at 0, 100, 300, 700; the next would come at 1100, past the budget of 1000 ms.
    expect(gaps(runs)).toEqual([100, 200, 400]);
    expect((await w.journal.getOutbox(paymentKey("o1")))?.status).toBe("reconcile");
    expect(await escalations()).toEqual([{ labels: { kind: "payment", reason: "max-age" }, value: 1 }]);
  });

  it("wait the provider's retryAfterMs when it is longer than the backoff, never less than the backoff", async () => {
    const { w, runs } = await setUp({ notPerformedMaxAttempts: 4, notPerformedMaxAgeMs: null }, [
      async () => notPerformed("503, retry at once", { retryAfterMs: 0 }),
      async () => notPerformed("429, retry in 5 s", { retryAfterMs: 5_000 }),
      async () => succeeded({ id: "pay_1" }),
    ]);
    await w.drain();
    expect(gaps(runs)).toEqual([100, 5_000]);
    expect((await w.stateFromJournal<PaymentState>("order/o1")).payment).toBe("Completed");
  });

  it("a success within the budget completes the effect without any escalation", async () => {
    const { w, warnings, escalations } = await setUp({ notPerformedMaxAttempts: 3, notPerformedMaxAgeMs: null }, [
      rateLimited,
      rateLimited,
      async () => succeeded({ id: "pay_1" }),
    ]);
    await w.drain();
    expect(await w.events("order/o1")).toEqual(["PaymentRequested", "PaymentCompleted"]);
    expect(warnings).toEqual([]);
    expect(await escalations()).toEqual([]);
  });
});

describe("an operator and an effect whose retries were exhausted", () => {
  it("may retry it with the same key and a fresh budget; it then completes", async () => {
    const { w, keys, runs } = await setUp({ notPerformedMaxAttempts: 2, notPerformedMaxAgeMs: null }, [
      rateLimited,
      rateLimited,
      rateLimited,
      async () => succeeded({ id: "pay_1" }),
    ]);
    await w.drain();
    expect(runs).toHaveLength(2);
    const queue = new Reconciliation({ journal: w.journal, clock: w.clock });
    await expect(queue.retry(paymentKey("o1"), { by: " " })).rejects.toThrow(/by \(the operator\) is required/);
    const view = await queue.retry(paymentKey("o1"), { by: "ada", note: "limit raised" });
    expect(view).toMatchObject({ needsReconciliation: false, status: "Unknown" });
    expect(view.lastError).toMatch(/^retried by ada \(limit raised\); it was: retries exhausted after 2 attempts/);
    await w.drain();
    // A fresh budget of two: one more 429, then the success.
    expect(keys).toEqual(Array(4).fill(paymentKey("o1")));
    expect(await w.events("order/o1")).toEqual(["PaymentRequested", "PaymentNeedsReconciliation", "PaymentCompleted"]);
    expect((await getEffect(w.journal, paymentKey("o1"))).status).toBe("Completed");
  });

  it("may settle it failed: the owner records the failure, the provider is not called again", async () => {
    const { w, runs } = await setUp({ notPerformedMaxAttempts: 2, notPerformedMaxAgeMs: null });
    await w.drain();
    const queue = new Reconciliation({ journal: w.journal, clock: w.clock });
    await queue.settle(paymentKey("o1"), { outcome: "failed", reason: "never charged: limit exceeded", by: "ada" });
    await w.drain();
    expect(runs).toHaveLength(2);
    expect((await w.stateFromJournal<PaymentState>("order/o1")).payment).toBe("Failed");
    expect(await queue.list()).toEqual([]);
  });

  it("may not retry an effect whose outcome is Unknown (it may have acted)", async () => {
    const { w } = await setUp({}, [
      async () => {
        throw new Error("connection reset");
      },
    ]);
    await w.drain();
    const row = await w.journal.getOutbox(paymentKey("o1"));
    expect(row?.status).toBe("reconcile");
    const queue = new Reconciliation({ journal: w.journal, clock: w.clock });
    expect(await queue.list()).toEqual([expect.objectContaining({ cause: "unknown", neverPerformed: false })]);
    await expect(queue.retry(paymentKey("o1"), { by: "ada" })).rejects.toBeInstanceOf(EffectNotRetryableError);
    expect((await w.journal.getOutbox(paymentKey("o1")))?.status).toBe("reconcile");
  });

  it("is told when an earlier run was ambiguous (a provider that dedups): not known never performed", async () => {
    const { w } = await setUp({ providerDedups: true, maxAttempts: 5, notPerformedMaxAttempts: 2 }, [
      async () => {
        throw new Error("socket hang up");
      },
    ]);
    await w.drain();
    expect(await new Reconciliation({ journal: w.journal }).list()).toEqual([
      expect.objectContaining({ cause: "retries-exhausted", neverPerformed: false, attempts: 3 }),
    ]);
  });
});
