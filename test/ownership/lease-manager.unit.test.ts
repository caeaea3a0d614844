import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { FencedOutError, InvalidInputError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import { seededRandom } from "../../src/core/clock.js";
import { ArmableFaults } from "../../src/core/faults.js";
import type { Logger } from "../../src/core/logger.js";
import { silentLogger } from "../../src/core/logger.js";
import { Runtime } from "../../src/core/runtime.js";
import { sliceOfAddress } from "../../src/core/slices.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { SliceLeaseManager } from "../../src/ownership/lease-manager.js";
import { SimulatedClock } from "../../src/testing/clock.js";

const LEASE_MS = 3_000;

const counter = defineActor<{ total: number }, { type: "Add"; n: number }, { type: "Added"; n: number }>({
  type: "counter",
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => ({ total: state.total + event.n }),
  decide: (command, state) => ({ events: [{ type: "Added", n: command.n }], reply: state.total + command.n }),
});

const manager = (
  journal: Journal,
  clock: SimulatedClock,
  workerId: string,
  more: { registry?: Registry; logger?: Logger } = {},
) =>
  new SliceLeaseManager({
    journal,
    workerId,
    sliceCount: 2,
    leaseMs: LEASE_MS,
    maxMovesPerRound: 4,
    clock,
    random: seededRandom(7),
    logger: more.logger ?? silentLogger,
    registry: more.registry,
  });

/** An address of each slice (of 2). */
const addresses = ["counter/0", "counter/1", "counter/2", "counter/3", "counter/4"];
const inSlice = (slice: number) => addresses.find((a) => sliceOfAddress(a, 2) === slice) as string;

function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe("SliceLeaseManager", () => {
  it("lets a slice go only after its commands in flight settled, so they commit under their token", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const a = manager(journal, clock, "worker-a");
    const b = manager(journal, clock, "worker-b");
    const faults = new ArmableFaults();
    const runtime = new Runtime({ journal, actors: [counter], clock, ownership: a, faults, logger: silentLogger });
    await a.round();
    expect(a.ownedSlices()).toEqual([0, 1]);
    // One command per slice, both stalled just before their commit.
    const stall = gate();
    faults.arm("commit.before", { action: () => stall.opened, times: 2 });
    const sent = [0, 1].map((slice) => runtime.send(inSlice(slice), { type: "Add", n: 1 }));
    await new Promise((resolve) => setImmediate(resolve));
    await b.round(); // b announces itself: the share falls to 1
    await a.round(); // a lets one slice go: owned no more, its lease kept while its command settles
    expect(a.ownedSlices()).toHaveLength(1);
    const [released] = [0, 1].filter((slice) => !a.owns(slice)) as [number];
    await b.round();
    expect(b.ownedSlices()).toEqual([]); // still leased to a
    stall.open();
    const results = await Promise.all(sent);
    expect(results.map((r) => r.version)).toEqual([1, 1]); // neither was fenced out
    await a.releasesSettled();
    await b.round();
    expect(b.ownedSlices()).toEqual([released]);
    runtime.close();
  });

  it("refuses commands once its lease lapsed by its own clock, and drops a fenced-out slice at once, warning", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const registry = new Registry();
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_, msg) => warnings.push(String(msg)) };
    const a = manager(journal, clock, "worker-a", { registry, logger });
    const b = manager(journal, clock, "worker-b");
    const runtime = new Runtime({ journal, actors: [counter], clock, ownership: a, registry, logger });
    await a.round();
    await runtime.send(inSlice(0), { type: "Add", n: 1 });
    await runtime.send(inSlice(1), { type: "Add", n: 1 });
    expect(runtime.activeCount).toBe(2);
    clock.advance(LEASE_MS); // a stalls past its lease; b takes both slices
    await b.round();
    // a has not run a round since: by its clock its leases lapsed, so it refuses before committing.
    const stale = await runtime.send(inSlice(0), { type: "Add", n: 1 }).catch((e: unknown) => e);
    expect(stale).toMatchObject({ name: "NotOwnerError" });
    expect(a.fence(0)).toBe(1);
    a.fencedOut(0, 1);
    expect(a.fence(0)).toBeUndefined();
    expect(warnings.some((w) => w.includes("lost slice 0"))).toBe(true);
    expect(await registry.getSingleMetricAsString("oncely_slice_moves_total")).toContain('kind="lost"} 1');
    expect(runtime.activeCount).toBe(0); // neither slice is owned now: no cached actor is trusted
    runtime.close();
  });

  it("counts a fenced commit and drops the slice's actors", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const registry = new Registry();
    const a = manager(journal, clock, "worker-a");
    const b = manager(journal, clock, "worker-b");
    const faults = new ArmableFaults();
    const runtime = new Runtime({
      journal,
      actors: [counter],
      clock,
      ownership: a,
      faults,
      registry,
      logger: silentLogger,
    });
    await a.round();
    await runtime.send(inSlice(1), { type: "Add", n: 1 });
    const stall = gate();
    faults.arm("commit.before", { action: () => stall.opened });
    const late = runtime.send(inSlice(0), { type: "Add", n: 1 }).catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(LEASE_MS);
    await b.round();
    stall.open();
    expect(await late).toBeInstanceOf(FencedOutError);
    expect(await registry.getSingleMetricAsString("oncely_fenced_commits_total")).toContain(
      "oncely_fenced_commits_total 1",
    );
    expect(a.fence(0)).toBeUndefined();
    runtime.close();
  });

  it("drops a lapsed lease at its next round and evicts the slice's cached actors, which then rebuild", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const a = manager(journal, clock, "worker-a");
    const runtime = new Runtime({ journal, actors: [counter], clock, ownership: a, logger: silentLogger });
    await a.round();
    await runtime.send(inSlice(0), { type: "Add", n: 1 });
    expect(runtime.activeCount).toBe(1);
    clock.advance(LEASE_MS);
    await a.round(); // lapsed: dropped (and taken again, under a new token)
    expect(runtime.activeCount).toBe(0);
    expect(a.fence(0)).toBe(2);
    expect(await runtime.send(inSlice(0), { type: "Add", n: 1 })).toMatchObject({ version: 2, reply: 2 });
    runtime.close();
  });

  it("stops by letting every slice go and withdrawing its heartbeat, so another worker takes them at once", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const a = manager(journal, clock, "worker-a");
    const b = manager(journal, clock, "worker-b");
    await a.round();
    await b.round();
    await a.stop();
    expect(a.ownedSlices()).toEqual([]);
    await b.round();
    expect(b.ownedSlices()).toEqual([0, 1]);
  });

  it("counts the slices its journal counts unless told", () => {
    expect(new SliceLeaseManager({ journal: memoryJournal({ sliceCount: 8 }), workerId: "w" }).sliceCount).toBe(8);
    expect(new SliceLeaseManager({ journal: memoryJournal(), workerId: "w" }).sliceCount).toBe(64);
    expect(
      new SliceLeaseManager({ journal: memoryJournal({ sliceCount: 8 }), workerId: "w", sliceCount: 4 }).sliceCount,
    ).toBe(4);
  });

  it("refuses bad options with a message naming them", () => {
    const journal = memoryJournal();
    expect(() => new SliceLeaseManager({ journal, workerId: "w", sliceCount: 3 })).toThrow(InvalidInputError);
    expect(() => new SliceLeaseManager({ journal, workerId: "" })).toThrow(/workerId/);
    expect(() => new SliceLeaseManager({ journal, workerId: "w", leaseMs: 100, roundMs: 100 })).toThrow(/roundMs/);
  });
});
