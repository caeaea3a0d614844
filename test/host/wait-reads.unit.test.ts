import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createHost, defineActor } from "../../src/index.js";
import { memoryJournal, SimulatedClock } from "../../src/testing/index.js";

/**
 * What a waiting `host.waitFor` costs the journal, counted as `readStream` calls per stream on a
 * wrapped journal (never timed). The clock is simulated and never advanced: no poll fires, so
 * every read counted was caused by a wake-up. The runtime reads a stream once too, when it first
 * activates the actor: `activate` does that and then forgets the count, so that only the waits' reads are counted.
 */

type Counter = { count: number };
type Add = { type: "Add"; publish?: boolean };
type Added = { type: "Added" };

const counter = defineActor<Counter, Add, Added>({
  type: "counter",
  initialState: () => ({ count: 0 }),
  evolve: (state) => ({ count: state.count + 1 }),
  decide: (command, state, { id }) => ({
    events: [{ type: "Added" }],
    // An integration event: an outbox row nobody is handed at commit, which wakes outbox listeners.
    publish: command.publish
      ? [{ eventId: `${id}-${state.count + 1}`, type: "Added", source: "counter", aggregateId: id, payload: {} }]
      : [],
  }),
});

function countedHost() {
  const journal = memoryJournal();
  const reads = new Map<string, number>();
  const readStream = journal.readStream.bind(journal);
  journal.readStream = (stream: string, ...rest: [number?, number?]) => {
    reads.set(stream, (reads.get(stream) ?? 0) + 1);
    return readStream(stream, ...rest);
  };
  const clock = new SimulatedClock(0);
  const host = createHost({ journal, actors: [counter], clock, name: "reads" });
  const activate = async (addresses: string[]) => {
    for (const address of addresses) await host.state(address);
    reads.clear();
  };
  return { host, journal, reads, activate, clock };
}

/** Lets every wake-up, and the look it starts, run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("waitFor follows this process's commits without reading the journal again", () => {
  it("N waiters, each on its own actor with K commits, read each stream once: O(N), not O(N × K)", async () => {
    const { host, reads, activate } = countedHost();
    const N = 20;
    const K = 5;
    const addresses = Array.from({ length: N }, (_, i) => `counter/${i}`);
    await activate(addresses);
    const waits = addresses.map((address) =>
      host.waitFor<Counter>(address, (state) => state.count === K, { timeoutMs: 60_000 }),
    );
    await settle();
    for (let k = 0; k < K; k++) {
      await Promise.all(addresses.map((address) => host.send(address, { type: "Add" })));
    }
    const resolved = await Promise.all(waits);
    expect(resolved.map(({ state, version }) => [state.count, version])).toEqual(addresses.map(() => [K, K]));
    expect(addresses.map((address) => reads.get(address))).toEqual(addresses.map(() => 1));
    await host.stop();
  });

  it("a commit on another actor, even one that adds an outbox row, does not re-read this waiter's stream", async () => {
    const { host, reads, activate } = countedHost();
    await activate(["counter/mine", "counter/other"]);
    const waiting = host.waitFor<Counter>("counter/mine", (state) => state.count === 1, { timeoutMs: 60_000 });
    await settle();
    expect(reads.get("counter/mine")).toBe(1);
    for (let i = 0; i < 10; i++) await host.send("counter/other", { type: "Add", publish: true });
    await settle();
    expect(reads.get("counter/mine")).toBe(1);
    await host.send("counter/mine", { type: "Add" });
    expect((await waiting).state.count).toBe(1);
    expect(reads.get("counter/mine")).toBe(1);
    await host.stop();
  });

  it("reads the stream's tail when a version it was not handed comes first (another process's commit)", async () => {
    const { host, journal, reads } = countedHost();
    const waiting = host.waitFor<Counter>("counter/shared", (state) => state.count === 2, { timeoutMs: 60_000 });
    await settle();
    // Another process: a commit straight to the journal, which this host does not see.
    await journal.commit({
      stream: "counter/shared",
      expectedVersion: 0,
      events: [{ eventId: "elsewhere-1", type: "Added", data: { type: "Added" } }],
      now: 0,
    });
    await host.send("counter/shared", { type: "Add" });
    expect(await waiting).toEqual({ state: { count: 2 }, version: 2 });
    // The wait's first look, the runtime's activation (it recovers version 1), the wait's read of the tail.
    expect(reads.get("counter/shared")).toBe(3);
    await host.stop();
  });

  it("an actor committing a little slower than the first poll interval is not read again between its commits", async () => {
    const { host, reads, activate, clock } = countedHost();
    await activate(["counter/slow"]);
    const K = 10;
    const waiting = host.waitFor<Counter>("counter/slow", (state) => state.count === K, { timeoutMs: 60_000 });
    await settle();
    for (let k = 0; k < K; k++) {
      // 30 ms between commits, past the poll's first 25 ms: the poll fires once, then waits longer.
      clock.advance(30);
      await settle();
      await host.send("counter/slow", { type: "Add" });
      await settle();
    }
    expect((await waiting).state.count).toBe(K);
    // The first look, and the polls at 25 ms and 25 + 50 ms of the wait, and no more.
    expect(reads.get("counter/slow")).toBeLessThanOrEqual(3);
    await host.stop();
  });
});

describe("a wait's recovery", () => {
  it("counts a snapshot it could not use in the host's registry, as the runtime's recovery does", async () => {
    const journal = memoryJournal();
    const registry = new Registry();
    const snapshotted = defineActor<Counter, Add, Added>({
      ...counter,
      type: "snapshotted",
      snapshot: { every: 1, schemaVersion: 2 },
    });
    // A snapshot of an older shape, with no migration: recovery ignores it and replays the stream.
    await journal.commit({
      stream: "snapshotted/1",
      expectedVersion: 0,
      events: [{ eventId: "e1", type: "Added", data: { type: "Added" } }],
      snapshot: { version: 1, schemaVersion: 1, state: { count: 99 } },
      now: 0,
    });
    const host = createHost({ journal, actors: [snapshotted], registry, name: "snapshots" });
    expect((await host.waitFor<Counter>("snapshotted/1", (state) => state.count === 1)).state.count).toBe(1);
    const ignored = await registry.getSingleMetric("oncely_snapshot_ignored_total")?.get();
    expect(ignored?.values).toEqual([{ labels: { actor_type: "snapshotted" }, value: 1 }]);
    await host.stop();
  });
});
