import { describe, expect, it } from "vitest";
import { IdempotencyKeyReusedError, RetryableError, TerminalError } from "../../src/base/errors.js";
import { type EffectHandler, notPerformed, succeeded } from "../../src/effects/types.js";
import { getEffect } from "../../src/effects/view.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { type PaymentState, paymentActor, paymentKey } from "./fixtures/payment-actor.js";
import { World } from "./fixtures/world.js";

type Answer = () => Promise<ReturnType<typeof succeeded<{ id: string }>> | ReturnType<typeof notPerformed>>;

/** A payment handler for a provider that does NOT dedup: any ambiguity would send it Unknown. */
function scripted(answers: Answer[]) {
  const keys: string[] = [];
  const handler: EffectHandler<{ amount: number }, { id: string }> = {
    kind: "payment",
    policy: {
      providerDedups: false,
      maxAttempts: 1,
      backoff: { initialMs: 100, maxMs: 100, multiplier: 1, jitter: 0 },
    },
    async run(_input, { idempotencyKey }) {
      keys.push(idempotencyKey);
      const next = answers.shift();
      if (!next) throw new Error("no scripted answer left");
      return next();
    },
  };
  return { handler, keys };
}

async function start(handler: EffectHandler<{ amount: number }, { id: string }>) {
  const w = new World(memoryJournal(), [paymentActor], [handler]);
  await w.node.runtime.send("order/o1", { type: "RequestPayment", amount: 10 });
  return w;
}

describe("handler result vocabulary", () => {
  it("notPerformed retries with the same key after retryAfterMs, never going Unknown", async () => {
    const { handler, keys } = scripted([
      async () => notPerformed("503 before acting", { retryAfterMs: 5_000 }),
      async () => succeeded({ id: "pay_1" }),
    ]);
    const w = await start(handler);
    expect(await w.node.dispatcher.runOnce()).toBe(1);
    expect((await getEffect(w.journal, paymentKey("o1")))?.status).toBe("Pending");
    w.clock.advance(4_999);
    expect(await w.node.dispatcher.runOnce()).toBe(0);
    w.clock.advance(1);
    expect(await w.node.dispatcher.runOnce()).toBe(1);
    expect(keys).toEqual([paymentKey("o1"), paymentKey("o1")]);
    expect((await w.stateFromJournal<PaymentState>("order/o1")).payment).toBe("Completed");
    expect(await w.events("order/o1")).toEqual(["PaymentRequested", "PaymentCompleted"]);
  });

  it("a thrown RetryableError is not performed: retried with the same key, not Unknown", async () => {
    const { handler, keys } = scripted([
      async () => {
        throw new RetryableError("429 rate limited", { retryAfterMs: 1_000 });
      },
      async () => succeeded({ id: "pay_1" }),
    ]);
    const w = await start(handler);
    await w.node.dispatcher.runOnce();
    w.clock.advance(1_000);
    await w.node.dispatcher.runOnce();
    expect(keys).toEqual([paymentKey("o1"), paymentKey("o1")]);
    expect(await w.events("order/o1")).toEqual(["PaymentRequested", "PaymentCompleted"]);
  });

  it("a thrown TerminalError fails the effect definitely, without asking again", async () => {
    const { handler, keys } = scripted([
      async () => {
        throw new TerminalError("400 card number invalid");
      },
    ]);
    const w = await start(handler);
    await w.drain();
    expect(keys).toHaveLength(1);
    expect((await w.stateFromJournal<PaymentState>("order/o1")).payment).toBe("Failed");
    expect(await w.events("order/o1")).toEqual(["PaymentRequested", "PaymentFailed"]);
  });

  it("a thrown IdempotencyKeyReusedError (a 409: the key went through with another body) stays ambiguous", async () => {
    const { handler } = scripted([
      async () => {
        throw new IdempotencyKeyReusedError(paymentKey("o1"));
      },
    ]);
    const w = await start(handler);
    await w.drain();
    expect((await w.stateFromJournal<PaymentState>("order/o1")).payment).toBe("Unknown");
  });

  it("any other throw stays ambiguous: a provider that does not dedup goes Unknown", async () => {
    const { handler, keys } = scripted([
      async () => {
        throw new Error("connection reset");
      },
    ]);
    const w = await start(handler);
    await w.drain();
    expect(keys).toHaveLength(1);
    expect((await w.stateFromJournal<PaymentState>("order/o1")).payment).toBe("Unknown");
  });
});
