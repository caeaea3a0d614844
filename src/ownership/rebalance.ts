import type { Random } from "../core/clock.js";
import { isFree, type SliceLease } from "./lease-store.js";

/**
 * One worker's rebalance round, as a pure function of what it read: which slices to let go and
 * which to take. Every worker runs it on its own, and the rules make the workers converge without
 * talking to each other:
 *
 * - the fair share is `ceil(sliceCount / liveWorkers)`: the shares add up to at least the slice
 *   count, so once each worker holds at most its share, every slice can be held;
 * - a worker above its share lets the excess go (a joining worker's heartbeat raises the count,
 *   which lowers everyone's share and frees slices for it);
 * - a worker below its share takes free slices (never leased, released, or whose lease expired),
 *   in a random order, so two workers taking at once seldom reach for the same slice;
 * - at most `maxMoves` releases and acquisitions together per round: no storm of recoveries when a
 *   worker dies, and no worker lets most of its slices go at once.
 *
 * Two workers that reach for one slice are kept apart by the fence (one commit moves it), not here.
 */
export interface RebalanceInput {
  sliceCount: number;
  /** Live workers (heartbeats that hold), this one included; at least 1. */
  liveWorkers: number;
  /** The slices this worker holds (and is not already releasing). */
  held: ReadonlySet<number>;
  /** Stored leases by slice. */
  leases: ReadonlyMap<number, SliceLease>;
  now: number;
  maxMoves: number;
  random: Random;
}

export interface RebalancePlan {
  release: number[];
  acquire: number[];
}

export const fairShare = (sliceCount: number, liveWorkers: number): number =>
  Math.ceil(sliceCount / Math.max(1, liveWorkers));

export function planRebalance(input: RebalanceInput): RebalancePlan {
  const share = fairShare(input.sliceCount, input.liveWorkers);
  const held = [...input.held];
  if (held.length > share) {
    return {
      release: shuffled(held, input.random).slice(0, Math.min(held.length - share, input.maxMoves)),
      acquire: [],
    };
  }
  const wanted = Math.min(share - held.length, input.maxMoves);
  if (wanted <= 0) return { release: [], acquire: [] };
  const free: number[] = [];
  for (let slice = 0; slice < input.sliceCount; slice++) {
    if (!input.held.has(slice) && isFree(input.leases.get(slice), input.now)) free.push(slice);
  }
  return { release: [], acquire: shuffled(free, input.random).slice(0, wanted) };
}

/** Fisher-Yates with the injected random source: the same seed, the same order. */
function shuffled<T>(items: T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
