import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/core/clock.js";
import { HostStoppedError } from "../../src/errors.js";
import { createHost, defineActor } from "../../src/index.js";
import { memoryJournal, SimulatedClock } from "../../src/testing/index.js";

/**
 * When a wait on an actor that commits in this process resolves: in the turn the commit that
 * satisfies it returns, before the commit's caller goes on, with no read of the journal, whatever
 * the wait was doing then (napping, or reading for its poll), and also when the wait began while
 * that commit was in flight. Counted, never timed: `readStream` calls on a wrapped journal, and
 * the naps of a counting clock that ran out (the poll's ticks). The simulated clock moves only
 * when a test advances it, so no poll fires unless a test makes it.
 */

type Counter = { count: number };
const counter = defineActor<Counter, { type: "Add" }, { type: "Added" }>({
  type: "counter",
  initialState: () => ({ count: 0 }),
  evolve: (state) => ({ count: state.count + 1 }),
  decide: () => ({ events: [{ type: "Added" }] }),
});

/** A door the test opens: what waits on it goes on once `open()` is called. */
function door() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

function harness() {
  const journal = memoryJournal();
  const reads: string[] = [];
  // While a door is set, a read answers what the stream held when it was called, once the door
  // opens (a read whose snapshot precedes what lands meanwhile); a commit is written once it opens.
  let readDoor: Promise<void> | undefined;
  let commitDoor: Promise<void> | undefined;
  const readStream = journal.readStream.bind(journal);
  journal.readStream = async (stream: string, ...rest: [number?, number?]) => {
    reads.push(stream);
    const answer = await readStream(stream, ...rest);
    if (readDoor) await readDoor;
    return answer;
  };
  const commit = journal.commit.bind(journal);
  journal.commit = async (...args: Parameters<typeof commit>) => {
    if (commitDoor) await commitDoor;
    return commit(...args);
  };
  const simulated = new SimulatedClock(0);
  const naps = { ranOut: 0 };
  // No `timer`: every nap is a `sleep`, counted when it runs out rather than being woken.
  const clock: Clock = {
    now: () => simulated.now(),
    sleep: (ms, signal) =>
      simulated.sleep(ms, signal).then(() => {
        naps.ranOut++;
      }),
  };
  const host = createHost({ journal, actors: [counter], clock, name: "turns" });
  return {
    host,
    reads,
    naps,
    clock: simulated,
    /** From now on reads answer only once the returned door opens. */
    holdReads() {
      const held = door();
      readDoor = held.opened;
      return held;
    },
    /** From now on commits are written only once the returned door opens. */
    holdCommits() {
      const held = door();
      commitDoor = held.opened;
      return held;
    },
    /** The runtime reads an actor once, when it first holds it: done here, then forgotten. */
    async activate(address: string) {
      await host.state(address);
      reads.length = 0;
    },
  };
}

/** Lets every wake-up, and the look it starts, run (real time: the host's clock does not move). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

/** The wait's outcome so far, without awaiting it. */
function watched<T>(wait: Promise<T>) {
  const seen: { value?: T; error?: unknown } = {};
  wait.then(
    (value) => {
      seen.value = value;
    },
    (error: unknown) => {
      seen.error = error;
    },
  );
  return seen;
}

describe("a wait on an actor committing in this process", () => {
  it("resolves in the turn its commit returns, with its poll's read still in flight, and reads nothing more", async () => {
    const { host, reads, naps, clock, holdReads, activate } = harness();
    await activate("counter/a");
    const wait = watched(host.waitFor<Counter>("counter/a", (s) => s.count === 1, { timeoutMs: 60_000 }));
    await settle();
    expect(reads).toEqual(["counter/a"]); // the first look
    const read = holdReads();
    clock.advance(25); // the poll's first interval runs out: its read starts, and is held
    await settle();
    expect(naps.ranOut).toBe(1);
    expect(reads).toHaveLength(2);
    await host.send("counter/a", { type: "Add" });
    // Resolved before the commit's caller went on: no read answered, no timer ran.
    expect(wait.value).toEqual({ state: { count: 1 }, version: 1 });
    read.open();
    await settle();
    expect(reads).toHaveLength(2);
    expect(naps.ranOut).toBe(1);
    await host.stop();
  });

  it("that began while the commit was in flight hears it return: one read, no poll", async () => {
    const { host, reads, naps, holdCommits, activate } = harness();
    await activate("counter/b");
    const landing = holdCommits();
    // Nobody waits when the commit begins.
    const sending = host.send("counter/b", { type: "Add" });
    await settle();
    const wait = watched(host.waitFor<Counter>("counter/b", (s) => s.count === 1, { timeoutMs: 60_000 }));
    await settle();
    // Its first look read the stream before the commit landed.
    expect(reads).toEqual(["counter/b"]);
    expect(wait.value).toBeUndefined();
    landing.open();
    await sending;
    expect(wait.value).toEqual({ state: { count: 1 }, version: 1 });
    expect(reads).toEqual(["counter/b"]);
    expect(naps.ranOut).toBe(0);
    await host.stop();
  });

  it("whose commits come 20 ms apart, closer than the poll's interval, is never read after its first look", async () => {
    const { host, reads, clock, activate } = harness();
    await activate("counter/c");
    const K = 10;
    const wait = watched(host.waitFor<Counter>("counter/c", (s) => s.count === K, { timeoutMs: 60_000 }));
    await settle();
    for (let k = 0; k < K; k++) {
      clock.advance(20);
      await settle();
      await host.send("counter/c", { type: "Add" });
    }
    expect(wait.value).toEqual({ state: { count: K }, version: K });
    expect(reads).toEqual(["counter/c"]);
    await host.stop();
  });

  it("ends at once when the host stops, with its poll's read in flight", async () => {
    const { host, clock, holdReads, activate } = harness();
    await activate("counter/d");
    const wait = watched(host.waitFor<Counter>("counter/d", (s) => s.count === 1, { timeoutMs: 60_000 }));
    await settle();
    const read = holdReads();
    clock.advance(25);
    await settle();
    await host.stop();
    await settle();
    expect(wait.error).toBeInstanceOf(HostStoppedError);
    read.open();
  });

  it("that a predicate throwing for a followed commit rejects, and the commit itself succeeds", async () => {
    const { host, activate } = harness();
    await activate("counter/e");
    const wait = watched(
      host.waitFor<Counter>(
        "counter/e",
        (s) => {
          if (s.count === 1) throw new Error("predicate broke");
          return false;
        },
        { timeoutMs: 60_000 },
      ),
    );
    await settle();
    const sent = await host.send("counter/e", { type: "Add" });
    expect(sent.version).toBe(1);
    await settle();
    expect((wait.error as Error).message).toBe("predicate broke");
    await host.stop();
  });
});
