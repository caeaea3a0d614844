import { FencedOutError, NotOwnerError } from "../base/errors.js";
import { defineActor } from "../core/actor.js";
import { seededRandom } from "../core/clock.js";
import { ArmableFaults } from "../core/faults.js";
import { silentLogger } from "../core/logger.js";
import { Runtime } from "../core/runtime.js";
import { SLICE_FENCE_CONSUMER, sliceOfAddress } from "../core/slices.js";
import type { ConformanceTestApi } from "../journal/conformance-api.js";
import type { Journal } from "../journal/types.js";
import { SimulatedClock } from "../testing/clock.js";
import { SliceLeaseManager } from "./lease-manager.js";

const LEASE_MS = 3_000;
const ROUND_MS = 1_000;

/** A counter: every `Add` appends one event. */
const counter = defineActor<{ total: number }, { type: "Add"; n: number }, { type: "Added"; n: number }>({
  type: "counter",
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => ({ total: state.total + event.n }),
  decide: (command, state) => ({ events: [{ type: "Added", n: command.n }], reply: state.total + command.n }),
});

/**
 * Slice leases and fencing on a journal, as tests run by `journalConformance` on every back end:
 * the lease store is made of the journal's guarded checkpoints and documents, so every back end
 * must keep two workers from holding one slice, and a stale owner's commit out.
 */
export function sliceLeaseConformance(
  api: ConformanceTestApi,
  journal: () => Journal,
  /** Another journal on the same store (another pool or connection), when the subject has one. */
  second: () => Promise<Journal>,
): void {
  const { describe, it, expect } = api;

  const managers = (j: Journal, clock: SimulatedClock, ids: string[], sliceCount = 16) =>
    ids.map(
      (workerId, i) =>
        new SliceLeaseManager({
          journal: j,
          workerId,
          sliceCount,
          leaseMs: LEASE_MS,
          roundMs: ROUND_MS,
          maxMovesPerRound: 4,
          clock,
          random: seededRandom(i + 1),
          logger: silentLogger,
        }),
    );

  /** Every manager runs a round, in turn, `times` times; a round's releases finish before the next. */
  const rounds = async (all: SliceLeaseManager[], times: number) => {
    for (let n = 0; n < times; n++) {
      for (const manager of all) {
        const moves = await manager.round();
        expect(moves <= manager.maxMovesPerRound).toBe(true);
        await manager.releasesSettled();
        expect(overlap(all)).toEqual([]);
      }
    }
  };

  describe("slice leases", () => {
    it("two workers split the slices fairly, one owner each", async () => {
      const clock = new SimulatedClock();
      const [a, b] = managers(journal(), clock, ["worker-a", "worker-b"]) as [SliceLeaseManager, SliceLeaseManager];
      await rounds([a, b], 4);
      expect(a.ownedSlices()).toHaveLength(8);
      expect(b.ownedSlices()).toHaveLength(8);
      expect(new Set([...a.ownedSlices(), ...b.ownedSlices()]).size).toBe(16);
      // Held, not merely taken: renewed in later rounds with the tokens they were taken under.
      clock.advance(ROUND_MS);
      await rounds([a, b], 2);
      expect(a.ownedSlices()).toHaveLength(8);
      for (const slice of a.ownedSlices()) {
        expect(await journal().getCheckpoint(SLICE_FENCE_CONSUMER, String(slice))).toBe(a.fence(slice));
      }
    });

    it("a joining third worker takes its share within bounded rounds, without stopping the others", async () => {
      const clock = new SimulatedClock();
      const [a, b, c] = managers(journal(), clock, ["worker-a", "worker-b", "worker-c"]) as [
        SliceLeaseManager,
        SliceLeaseManager,
        SliceLeaseManager,
      ];
      await rounds([a, b], 4);
      // Share 6 of 16 each: a and b let 2 go each (one round), c takes the 4 freed (its next round).
      await rounds([a, b, c], 3);
      for (const m of [a, b]) expect(m.ownedSlices()).toHaveLength(6);
      expect(c.ownedSlices()).toHaveLength(4);
      expect(new Set([a, b, c].flatMap((m) => m.ownedSlices())).size).toBe(16);
    });

    it("a dead worker's slices move after its lease, and not before", async () => {
      const clock = new SimulatedClock();
      const [a, b] = managers(journal(), clock, ["worker-a", "worker-b"]) as [SliceLeaseManager, SliceLeaseManager];
      await rounds([a, b], 4);
      const ofB = b.ownedSlices();
      // b dies: no more rounds. Its lease runs LEASE_MS from its last renewal (now).
      for (let t = ROUND_MS; t < LEASE_MS; t += ROUND_MS) {
        clock.advance(ROUND_MS);
        await rounds([a], 1);
        expect(a.ownedSlices().some((slice) => ofB.includes(slice))).toBe(false);
      }
      clock.advance(ROUND_MS);
      expect(b.ownedSlices()).toEqual([]); // by its own clock, b's leases lapsed
      await rounds([a], 2); // 4 moves a round
      expect(a.ownedSlices()).toHaveLength(16);
    });

    it("refuses a command for an actor of a slice it does not own before reading anything", async () => {
      const clock = new SimulatedClock();
      const [idle] = managers(journal(), clock, ["worker-idle"]) as [SliceLeaseManager];
      let reads = 0;
      const counted = new Proxy(journal(), {
        get(target, key) {
          const value = Reflect.get(target, key);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            if (key !== "commit") reads++;
            return value.apply(target, args);
          };
        },
      });
      const runtime = new Runtime({
        journal: counted,
        actors: [counter],
        clock,
        ownership: idle,
        logger: silentLogger,
      });
      const error = await runtime.send("counter/7", { type: "Add", n: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotOwnerError);
      expect(error).toMatchObject({ address: "counter/7", slice: sliceOfAddress("counter/7", 16), retryable: true });
      expect(reads).toBe(0);
    });

    it("refuses a stalled owner's commit after a takeover by the fence, though its stream version is right", async () => {
      const clock = new SimulatedClock();
      const jA = journal();
      const jB = await second();
      const [a] = managers(jA, clock, ["worker-a"], 4) as [SliceLeaseManager];
      const [b] = managers(jB, clock, ["worker-b"], 4) as [SliceLeaseManager];
      const faults = new ArmableFaults();
      const runtimeA = new Runtime({
        journal: jA,
        actors: [counter],
        clock,
        ownership: a,
        faults,
        logger: silentLogger,
      });
      const runtimeB = new Runtime({ journal: jB, actors: [counter], clock, ownership: b, logger: silentLogger });
      await rounds([a], 1);
      expect(a.ownedSlices()).toEqual([0, 1, 2, 3]);
      const address = "counter/stalled";
      const slice = sliceOfAddress(address, 4);
      expect((await runtimeA.send(address, { type: "Add", n: 1 })).version).toBe(1);

      // a decides its next command on version 1, then stalls before the commit (a GC pause, a partition).
      let resume = () => {};
      const stalled = new Promise<void>((resolve) => {
        resume = resolve;
      });
      let reached = () => {};
      const atCommit = new Promise<void>((resolve) => {
        reached = resolve;
      });
      faults.arm("commit.before", {
        action: () => {
          reached();
          return stalled;
        },
      });
      const late = runtimeA.send(address, { type: "Add", n: 10 }).catch((e: unknown) => e);
      await atCommit;
      // a's lease lapses; b takes every slice. b writes nothing to the actor's stream: a's expected
      // version (1) is still the stream's, so only the fence can keep a's commit out.
      clock.advance(LEASE_MS);
      await rounds([b], 1);
      expect(b.ownedSlices()).toEqual([0, 1, 2, 3]);
      resume();
      const error = await late;
      expect(error).toBeInstanceOf(FencedOutError);
      expect(error).toMatchObject({ address, slice, token: 1, current: 2 });
      expect(await jB.streamVersion(address)).toBe(1);
      expect(a.fence(slice)).toBeUndefined(); // dropped at once, before a's next round
      // The new owner goes on from what the journal holds.
      const next = await runtimeB.send(address, { type: "Add", n: 5 });
      expect(next).toMatchObject({ version: 2, reply: 6 });
      runtimeA.close();
      runtimeB.close();
    });
  });
}

/** Slices that two managers own at once (none, ever). */
function overlap(all: SliceLeaseManager[]): number[] {
  const seen = new Set<number>();
  const twice: number[] = [];
  for (const manager of all) {
    for (const slice of manager.ownedSlices()) {
      if (seen.has(slice)) twice.push(slice);
      seen.add(slice);
    }
  }
  return twice;
}
