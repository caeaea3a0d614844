import type { Journal, Ownership } from "oncely";
import { CommandRouter, Dispatcher, defineActor, Runtime, silentLogger } from "oncely";
import { answerPeerRequest, type PeerLink, sliceOfAddress } from "oncely/advanced";
import type { Invariant, SimEnv, SimWorker } from "oncely/testing";
import { memoryJournal, seededRandom, sequentialIds } from "oncely/testing";
import { Registry } from "prom-client";

/**
 * Commands sent straight to the owning worker, under simulation. Worker A's router sends a command
 * for an actor of worker B's slice over a peer link that the seed makes answer, lose the request,
 * lose the answer after B ran the command, say B is not the owner, or say B cannot run it now; every
 * case but the first takes the journal path (a forward row B's dispatcher delivers). Each episode
 * checks that its command was applied exactly once and that A got its reply. The link is in memory
 * and calls the same `answerPeerRequest` the HTTP endpoint calls. The two workers keep their own
 * journal (in `env.outside`, so it outlives crashes), apart from the shop's, whose dispatcher would
 * otherwise claim the forward rows.
 */
const SLICES = 2;
const EPISODES = 5;
const VIOLATIONS = "sim-peer-forward-violations";
const MODES = ["answer", "lose-request", "lose-answer", "not-owner", "retryable"] as const;
type Mode = (typeof MODES)[number];

/** An actor of slice 1, which worker B owns. */
const ADDRESS = (() => {
  for (let i = 0; ; i++) if (sliceOfAddress(`sim-peer/${i}`, SLICES) === 1) return `sim-peer/${i}`;
})();

const tally = defineActor<{ n: number }, { type: "Add"; id: string }, { type: "Added"; id: string }>({
  type: "sim-peer",
  initialState: () => ({ n: 0 }),
  evolve: (state) => ({ n: state.n + 1 }),
  decide: (command, state) => ({ events: [{ type: "Added", id: command.id }], reply: { n: state.n + 1 } }),
});

const owning = (slice: number): Ownership => ({
  sliceCount: SLICES,
  owns: (s) => s === slice,
  fence: () => undefined,
  onChange: () => () => {},
});

interface Pending {
  id: string;
  mode: Mode;
  settled?: { reply?: unknown; error?: unknown };
}

interface Outside {
  journal: Journal;
  episodes: number;
}

function outside(env: SimEnv): Outside {
  if (!env.outside.has("peer-forwards"))
    env.outside.set("peer-forwards", { journal: memoryJournal({ sliceCount: SLICES }), episodes: 0 });
  return env.outside.get("peer-forwards") as Outside;
}

export function peerForwardsWorker(env: SimEnv): SimWorker {
  const record = outside(env);
  const journal = record.journal;
  const quiet = { clock: env.clock, logger: silentLogger };
  const runtimeA = new Runtime({ ...quiet, journal, actors: [tally], ownership: owning(0), registry: new Registry() });
  const runtimeB = new Runtime({ ...quiet, journal, actors: [tally], ownership: owning(1), registry: new Registry() });
  let mode: Mode = "answer";
  const link: PeerLink = {
    async send(_endpoint, request) {
      switch (mode) {
        case "lose-request":
          throw new Error("simulated: the request was lost");
        case "not-owner":
          return { kind: "not-owner" };
        case "retryable":
          return { kind: "retryable", name: "StorageUnavailableError", message: "simulated" };
        case "lose-answer":
          await answerPeerRequest(runtimeB, owning(1), request);
          throw new Error("simulated: the answer was lost after the owner ran the command");
        default:
          return answerPeerRequest(runtimeB, owning(1), request);
      }
    },
    close() {},
  };
  const routerA = new CommandRouter({
    ...quiet,
    runtime: runtimeA,
    journal,
    ownership: owning(0),
    ids: sequentialIds(`g${env.generation}-peer-`),
    registry: new Registry(),
    peers: { link, endpointOf: (slice) => (slice === 1 ? "sim://worker-b" : undefined) },
    // The world's pauses move its clock by minutes: the forward's timeout (liveness, not safety) must not end the wait.
    timeoutMs: 7 * 24 * 3_600_000,
  });
  const dispatcherB = new Dispatcher({
    ...quiet,
    journal,
    runtime: runtimeB,
    ownership: owning(1),
    owner: `g${env.generation}-peer-b/dispatcher`,
    random: seededRandom(7),
    pollIntervalMs: 2 ** 40,
    registry: new Registry(),
  });
  let pending: Pending | undefined;

  const violation = (message: string) =>
    env.journal.commit({
      documents: [{ collection: VIOLATIONS, id: `${env.generation}-${record.episodes}`, doc: { message } }],
      now: env.clock.now(),
    });

  return {
    name: `g${env.generation}-peer-forwards`,
    async runOnce() {
      if (!pending) {
        if (record.episodes >= EPISODES) return 0;
        // Each mode in turn, not drawn from the world's random: this part must not shift what the seed draws for the shop.
        mode = MODES[record.episodes % MODES.length] as Mode;
        const id = `g${env.generation}-e${record.episodes}`;
        const started: Pending = { id, mode };
        pending = started;
        const add: { type: "Add"; id: string } = { type: "Add", id };
        routerA.send(ADDRESS, add, { messageId: id }).then(
          (result) => {
            started.settled = { reply: result.reply };
          },
          (error: unknown) => {
            started.settled = { error };
          },
        );
        return 1;
      }
      // The journal path: B's dispatcher delivers the forward row; A's router reads it on its next poll.
      const delivered = await dispatcherB.runOnce();
      // Not settled yet: A's router reads the row again when the world's clock next moves (this part never moves it,
      // so the shop's own timing stays what the seed makes it).
      if (!pending.settled) return delivered;
      const { id, settled } = pending;
      const applied = (await journal.readStream(ADDRESS)).filter((e) => (e.data as { id?: string }).id === id).length;
      if (applied !== 1) await violation(`command ${id} (${pending.mode}) applied ${applied} times`);
      if (settled.error !== undefined)
        await violation(`command ${id} (${pending.mode}) failed: ${String(settled.error)}`);
      else if (typeof (settled.reply as { n?: unknown } | null)?.n !== "number") {
        await violation(`command ${id} (${pending.mode}) answered ${JSON.stringify(settled.reply)}`);
      }
      env.count(`peer-forwards:${pending.mode}`);
      record.episodes++;
      pending = undefined;
      return 1;
    },
  };
}

/** Every command sent to its owner ran exactly once and was answered, whichever way the peer link failed. */
export const peerForwardsOnce: Invariant = {
  name: "peer-forwards-once",
  async check(world) {
    return (await world.journal.listDocuments(VIOLATIONS)).map((d) => (d.doc as { message: string }).message);
  },
};
