import type { Random } from "../core/clock.js";
import type { Backoff } from "./types.js";

/**
 * Delay before retry number `n` (1-based): `initialMs * multiplier^(n-1)`, capped at `maxMs`,
 * with the fraction `jitter` of it randomized so that many rows failing together do not retry
 * in lockstep. Deterministic for a seeded `Random`.
 */
export function backoffDelay(backoff: Backoff, n: number, random: Random): number {
  const exponent = Math.max(0, n - 1);
  const base = Math.min(backoff.maxMs, backoff.initialMs * backoff.multiplier ** exponent);
  const jitter = Math.min(1, Math.max(0, backoff.jitter));
  return Math.round(base * (1 - jitter) + base * jitter * random.next());
}
