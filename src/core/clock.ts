/** Time, ids and randomness are injected everywhere, so a test or a simulation can fix them. */

import { timeOrderedIds } from "./time-ordered-ids.js";

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: call `fire` after `ms` of this clock's time unless the returned function is called
   * first. The same as `sleep` with a signal, without an AbortController and an abort event per
   * timer (a handler call's timeout is one; see withTimeout). A clock without it is used through
   * `sleep`.
   */
  timer?(ms: number, fire: () => void): () => void;
}

/**
 * The reason a sleep is cut short because waiting is no longer needed (woken early, the work
 * settled): one constant, since `abort()` without a reason builds a DOMException, stack and all,
 * on every call, even on a controller already aborted. Whoever cancels swallows the rejection.
 */
export const SLEEP_CANCELLED: unique symbol = Symbol("oncely.sleep-cancelled");

export const systemClock: Clock = {
  now: () => Date.now(),
  timer: (ms, fire) => {
    const handle = setTimeout(fire, ms);
    return () => clearTimeout(handle);
  },
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

export interface IdGenerator {
  next(): string;
}

/**
 * The default ids: unique UUIDs that sort by the time they were made (version 7, see
 * time-ordered-ids.ts), kept in index order by the journal. Tests inject `sequentialIds`.
 */
export const randomIds: IdGenerator = timeOrderedIds();

/** Deterministic ids: `prefix-1`, `prefix-2`, ... */
export function sequentialIds(prefix = "id"): IdGenerator {
  let n = 0;
  return { next: () => `${prefix}-${++n}` };
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
}

export const systemRandom: Random = { next: () => Math.random() };

/** Seeded PRNG (mulberry32): same seed, same sequence, on any machine. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return {
    next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}
