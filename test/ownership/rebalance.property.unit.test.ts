import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/core/clock.js";
import { silentLogger } from "../../src/core/logger.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { SliceLeaseManager } from "../../src/ownership/lease-manager.js";
import { fairShare } from "../../src/ownership/rebalance.js";
import { SimulatedClock } from "../../src/testing/clock.js";

const SLICES = 16;
const LEASE_MS = 3_000;
const ROUND_MS = 1_000;
const MAX_MOVES = 3;

type Step =
  | { kind: "round"; worker: number }
  | { kind: "advance"; ms: number }
  | { kind: "kill"; worker: number }
  | { kind: "stop"; worker: number }
  | { kind: "join" };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("round" as const), worker: fc.nat(5) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 1_800 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("kill" as const), worker: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("stop" as const), worker: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("join" as const) }) },
);

/** Slices owned by two workers at once. */
function overlap(workers: SliceLeaseManager[]): number[] {
  const seen = new Set<number>();
  const twice: number[] = [];
  for (const worker of workers) {
    for (const slice of worker.ownedSlices()) {
      if (seen.has(slice)) twice.push(slice);
      seen.add(slice);
    }
  }
  return twice;
}

describe("rebalancing slices by leases (property)", () => {
  it("never lets two workers own one slice, moves at most maxMovesPerRound a round, and converges to a fair split", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), fc.nat(), async (steps, seed) => {
        const journal = memoryJournal();
        const clock = new SimulatedClock();
        const all: SliceLeaseManager[] = [];
        const alive = new Set<SliceLeaseManager>();
        const join = () => {
          const worker = new SliceLeaseManager({
            journal,
            workerId: `w${all.length}`,
            sliceCount: SLICES,
            leaseMs: LEASE_MS,
            roundMs: ROUND_MS,
            maxMovesPerRound: MAX_MOVES,
            clock,
            random: seededRandom(seed + all.length),
            logger: silentLogger,
          });
          all.push(worker);
          alive.add(worker);
        };
        const round = async (worker: SliceLeaseManager) => {
          const moves = await worker.round();
          expect(moves).toBeLessThanOrEqual(MAX_MOVES);
          await worker.releasesSettled();
        };
        join();
        join();
        for (const s of steps) {
          const pick = (n: number) => [...alive][n % Math.max(1, alive.size)];
          if (s.kind === "round") {
            const worker = pick(s.worker);
            if (worker) await round(worker);
          } else if (s.kind === "advance") clock.advance(s.ms);
          else if (s.kind === "join") {
            if (all.length < 6) join();
          } else {
            const worker = pick(s.worker);
            if (!worker || alive.size === 1) continue;
            alive.delete(worker);
            if (s.kind === "stop") await worker.stop();
          }
          // Every worker ever started counts: a killed one still answers by its own clock.
          expect(overlap(all)).toEqual([]);
        }
        // Settle: the living go round every ROUND_MS (renewing what they hold) while the dead
        // workers' leases and heartbeats lapse, until stable.
        for (let n = 0; n < LEASE_MS / ROUND_MS + Math.ceil(SLICES / MAX_MOVES) + 4; n++) {
          for (const worker of alive) await round(worker);
          expect(overlap(all)).toEqual([]);
          clock.advance(ROUND_MS);
        }
        for (const worker of alive) await round(worker);
        const share = fairShare(SLICES, alive.size);
        const owned = [...alive].map((worker) => worker.ownedSlices());
        for (const slices of owned) expect(slices.length).toBeLessThanOrEqual(share);
        expect(new Set(owned.flat()).size).toBe(SLICES);
      }),
      { numRuns: 60 },
    );
  });
});
