import type { Journal } from "oncely";
import { defineActor, errors, Runtime, SliceLeaseManager, silentLogger } from "oncely";
import { SLICE_FENCE_CONSUMER, sliceOfAddress } from "oncely/advanced";
import type { Invariant, SimEnv, SimWorker } from "oncely/testing";
import { Registry } from "prom-client";

/**
 * Two owners of one slice under simulation: worker A leases the slices, decides a command and
 * stalls just before its commit (a pause, a partition); its lease lapses, worker B takes the slice
 * over; then A's commit goes. A's expected stream version is still right (B wrote nothing), so only
 * the fence can refuse it. Each episode records whether a commit carried past a takeover landed;
 * `staleOwnerFenced` requires none did. A few episodes a run, counted in `outside` so crashes
 * (new generations, new worker ids) do not repeat them forever.
 */
const SLICES = 2;
const LEASE_MS = 3_000;
const EPISODES = 2;
const ADDRESS = "sim-fenced/1";

const tally = defineActor<{ n: number }, { type: "Add" }, { type: "Added" }>({
  type: "sim-fenced",
  initialState: () => ({ n: 0 }),
  evolve: (state) => ({ n: state.n + 1 }),
  decide: (_command, state) => ({ events: [{ type: "Added" }], reply: state.n + 1 }),
});

/** Where an episode that saw a stale owner's commit land says so (read by `staleOwnerFenced`). */
const VIOLATIONS = "sim-stale-owner-writes";

function outside(env: SimEnv): { episodes: number } {
  if (!env.outside.has("slice-owners")) env.outside.set("slice-owners", { episodes: 0 });
  return env.outside.get("slice-owners") as { episodes: number };
}

/** A journal whose commits wait at a gate while `held`; the fence token each carried is kept. */
function gated(journal: Journal) {
  let open: () => void = () => {};
  let gate: Promise<void> | undefined;
  const state = { carried: undefined as number | undefined };
  const proxy = new Proxy(journal, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      if (key !== "commit") return value.bind(target);
      return async (commit: Parameters<Journal["commit"]>[0]) => {
        if (gate) {
          state.carried = commit.checkpoints?.find((c) => c.consumer === SLICE_FENCE_CONSUMER)?.version;
          await gate;
        }
        return target.commit(commit);
      };
    },
  });
  return {
    journal: proxy,
    state,
    hold() {
      gate = new Promise<void>((resolve) => {
        open = resolve;
      });
    },
    release() {
      gate = undefined;
      open();
    },
  };
}

export function sliceOwnersWorker(env: SimEnv): SimWorker {
  const slice = sliceOfAddress(ADDRESS, SLICES);
  const manager = (name: string, journal: Journal) =>
    new SliceLeaseManager({
      journal,
      workerId: `g${env.generation}-${name}`,
      sliceCount: SLICES,
      leaseMs: LEASE_MS,
      maxMovesPerRound: SLICES,
      clock: env.clock,
      random: env.random,
      logger: silentLogger,
      registry: new Registry(),
    });
  const gateA = gated(env.journal);
  const a = manager("owner-a", env.journal);
  const b = manager("owner-b", env.journal);
  const runtime = (journal: Journal, ownership: SliceLeaseManager) =>
    new Runtime({
      journal,
      actors: [tally],
      clock: env.clock,
      ownership,
      logger: silentLogger,
      registry: new Registry(),
    });
  const runtimeA = runtime(gateA.journal, a);
  let phase: "own" | "stalled" | "taken" = "own";
  let pending: Promise<unknown> | undefined;
  let tokenA: number | undefined;

  return {
    name: `g${env.generation}-slice-owners`,
    async runOnce() {
      const record = outside(env);
      if (record.episodes >= EPISODES) return 0;
      if (phase === "own") {
        await a.round();
        if (!a.owns(slice)) {
          env.clock.advance(LEASE_MS / 3); // an earlier generation's leases lapse in time
          return 1;
        }
        tokenA = a.fence(slice);
        gateA.hold();
        pending = runtimeA.send(ADDRESS, { type: "Add" }).catch((error: unknown) => error);
        phase = "stalled";
        return 1;
      }
      if (phase === "stalled") {
        // A stalls past its lease; B takes the slice over.
        env.clock.advance(LEASE_MS);
        await b.round();
        if (!b.owns(slice)) return 1;
        phase = "taken";
        return 1;
      }
      const fence = await env.journal.getCheckpoint(SLICE_FENCE_CONSUMER, String(slice));
      gateA.release();
      const outcome = await pending;
      const carried = gateA.state.carried ?? tokenA ?? 0;
      if (outcome instanceof errors.FencedOutError) env.count("slice-owners:fenced");
      else if (!(outcome instanceof Error) && fence > carried) {
        const message = `a commit decided under token ${carried} of slice ${slice} landed after another worker took the slice (token ${fence})`;
        await env.journal.commit({
          documents: [{ collection: VIOLATIONS, id: String(record.episodes), doc: { message } }],
          now: env.clock.now(),
        });
      }
      record.episodes++;
      await b.stop(); // B lets the slice go: A takes it again for the next episode
      phase = "own";
      return 1;
    },
  };
}

/** No commit of a stale owner landed after another worker took its slice. */
export const staleOwnerFenced: Invariant = {
  name: "stale-owner-fenced",
  async check(world) {
    return (await world.journal.listDocuments(VIOLATIONS)).map((d) => (d.doc as { message: string }).message);
  },
};
