import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, requestHash } from "../../src/base/canonical-json.js";
import { InvalidInputError } from "../../src/base/errors.js";
import { seededRandom, systemClock } from "../../src/core/clock.js";
import { backoffDelay } from "../../src/effects/backoff.js";
import { EffectTimeoutError } from "../../src/effects/errors.js";
import { DEFAULT_EFFECT_POLICY, resolvePolicy } from "../../src/effects/policy.js";
import { withTimeout } from "../../src/effects/timeout.js";
import { SimulatedClock } from "../../src/testing/clock.js";

describe("backoff", () => {
  const backoff = { initialMs: 100, maxMs: 10_000, multiplier: 2, jitter: 0.5 };

  it("grows exponentially and is capped", () => {
    const none = { ...backoff, jitter: 0 };
    const r = seededRandom(1);
    expect([1, 2, 3, 4].map((n) => backoffDelay(none, n, r))).toEqual([100, 200, 400, 800]);
    expect(backoffDelay(none, 30, r)).toBe(10_000);
  });

  it("property: jittered delays stay within [base·(1-jitter), base]", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (n, seed, jitter) => {
          const b = { ...backoff, jitter };
          const base = Math.min(b.maxMs, b.initialMs * b.multiplier ** (n - 1));
          const d = backoffDelay(b, n, seededRandom(seed));
          expect(d).toBeGreaterThanOrEqual(Math.floor(base * (1 - jitter)));
          expect(d).toBeLessThanOrEqual(Math.ceil(base));
        },
      ),
    );
  });

  it("is deterministic for a seeded random", () => {
    const a = [1, 2, 3].map((n) => backoffDelay(backoff, n, seededRandom(7)));
    const b = [1, 2, 3].map((n) => backoffDelay(backoff, n, seededRandom(7)));
    expect(a).toEqual(b);
  });
});

describe("resolvePolicy", () => {
  it("merges layers over cautious defaults (provider not deduplicating)", () => {
    const p = resolvePolicy({ timeoutMs: 2_000 }, { backoff: { initialMs: 5 } as never, providerDedups: true });
    expect(DEFAULT_EFFECT_POLICY.providerDedups).toBe(false);
    expect(p.timeoutMs).toBe(2_000);
    expect(p.providerDedups).toBe(true);
    expect(p.backoff).toEqual({ ...DEFAULT_EFFECT_POLICY.backoff, initialMs: 5 });
  });

  it("refuses a lease not longer than the call timeout, naming the field", () => {
    expect(() => resolvePolicy({ timeoutMs: 5_000, leaseMs: 5_000 })).toThrow(InvalidInputError);
    expect(() => resolvePolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => resolvePolicy({ notPerformedMaxAttempts: 0 })).toThrow(/notPerformedMaxAttempts/);
    expect(() => resolvePolicy({ notPerformedMaxAgeMs: -1 })).toThrow(/notPerformedMaxAgeMs/);
    expect(resolvePolicy({ notPerformedMaxAgeMs: null }).notPerformedMaxAgeMs).toBeNull();
  });
});

describe("canonical request hash", () => {
  it("ignores key order, not values", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(requestHash({ a: 1, b: 2 })).toBe(requestHash({ b: 2, a: 1 }));
    expect(requestHash({ a: 1 })).not.toBe(requestHash({ a: 2 }));
  });
});

describe("withTimeout", () => {
  it("aborts the call's signal and rejects with EffectTimeoutError when the clock passes timeoutMs", async () => {
    const clock = new SimulatedClock();
    let seen: AbortSignal | undefined;
    const call = withTimeout(clock, 1_000, new AbortController().signal, (handler) => {
      seen = handler.signal;
      return new Promise<never>(() => {});
    });
    await new Promise((r) => setImmediate(r));
    clock.advance(999);
    expect(seen?.aborted).toBe(false);
    clock.advance(1);
    await expect(call).rejects.toBeInstanceOf(EffectTimeoutError);
    expect(seen?.aborted).toBe(true);
  });

  it("a signal first read after the timeout is born aborted, with the timeout as its reason", async () => {
    const clock = new SimulatedClock();
    let read: (() => AbortSignal) | undefined;
    const call = withTimeout(clock, 1_000, new AbortController().signal, (handler) => {
      read = () => handler.signal;
      return new Promise<never>(() => {});
    });
    await new Promise((r) => setImmediate(r));
    clock.advance(1_000);
    await expect(call).rejects.toBeInstanceOf(EffectTimeoutError);
    const signal = read?.();
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(EffectTimeoutError);
  });

  it("a signal read before the parent aborts is aborted with the parent's reason", async () => {
    const parent = new AbortController();
    let seen: AbortSignal | undefined;
    const call = withTimeout(new SimulatedClock(), 1_000, parent.signal, (handler) => {
      seen = handler.signal;
      return new Promise<never>(() => {});
    });
    await new Promise((r) => setImmediate(r));
    const reason = new Error("stopping");
    parent.abort(reason);
    await expect(call).rejects.toThrow("stopping");
    expect(seen?.reason).toBe(reason);
  });

  it("on the system clock (a cancellable timer, no AbortController): times out, aborting the signal read before", async () => {
    let seen: AbortSignal | undefined;
    const call = withTimeout(systemClock, 5, new AbortController().signal, (handler) => {
      seen = handler.signal;
      return new Promise<never>(() => {});
    });
    await expect(call).rejects.toBeInstanceOf(EffectTimeoutError);
    expect(seen?.reason).toBeInstanceOf(EffectTimeoutError);
  });

  it("cancels a clock's timer once the call answers, and never fires it after", async () => {
    const timers: { fire: () => void; cancelled: boolean }[] = [];
    const clock = {
      now: () => 0,
      sleep: () => new Promise<void>(() => {}),
      timer(_ms: number, fire: () => void) {
        const timer = { fire, cancelled: false };
        timers.push(timer);
        return () => {
          timer.cancelled = true;
        };
      },
    };
    await expect(withTimeout(clock, 1_000, new AbortController().signal, async () => "answer")).resolves.toBe("answer");
    expect(timers.map((t) => t.cancelled)).toEqual([true]);
    const late = withTimeout(clock, 1_000, new AbortController().signal, () => new Promise<never>(() => {}));
    await new Promise((r) => setImmediate(r));
    timers[1]?.fire();
    await expect(late).rejects.toBeInstanceOf(EffectTimeoutError);
  });

  it("calls sharing a parent: one that answered is left alone when the parent aborts, the others are aborted", async () => {
    const parent = new AbortController();
    const clock = new SimulatedClock();
    const signals: AbortSignal[] = [];
    const answered = withTimeout(clock, 1_000, parent.signal, async (handler) => {
      signals.push(handler.signal);
      return "answer";
    });
    const pending = [1, 2].map(() =>
      withTimeout(clock, 1_000, parent.signal, (handler) => {
        signals.push(handler.signal);
        return new Promise<never>(() => {});
      }),
    );
    await expect(answered).resolves.toBe("answer");
    const reason = new Error("stopping");
    parent.abort(reason);
    for (const call of pending) await expect(call).rejects.toBe(reason);
    expect(signals.map((s) => s.aborted)).toEqual([false, true, true]);
    // A call started after the abort is refused at once, with the same reason.
    await expect(withTimeout(clock, 1_000, parent.signal, async () => "late")).rejects.toBe(reason);
  });

  it("rejects when the parent (dispatcher stop) aborts", async () => {
    const parent = new AbortController();
    const call = withTimeout(new SimulatedClock(), 1_000, parent.signal, () => new Promise<never>(() => {}));
    parent.abort(new Error("stopping"));
    await expect(call).rejects.toThrow("stopping");
  });
});
