import { describe, expect, it } from "vitest";
import { NotOwnerError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import { silentLogger } from "../../src/core/logger.js";
import { ownsEverything, sliceOfAddress } from "../../src/core/slices.js";
import { createHost } from "../../src/host/host.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { SliceLeaseManager } from "../../src/ownership/lease-manager.js";
import { SLICE_LEASES } from "../../src/ownership/lease-store.js";

const counter = defineActor<{ total: number }, { type: "Add"; n: number }, { type: "Added"; n: number }>({
  type: "counter",
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => ({ total: state.total + event.n }),
  decide: (command, state) => ({ events: [{ type: "Added", n: command.n }], reply: state.total + command.n }),
});

describe("createHost with slice leases", () => {
  it("takes its share of slices at start, fences its commits, and lets every slice go at stop", async () => {
    const journal = memoryJournal({ sliceCount: 8 });
    const a = createHost({
      journal,
      actors: [counter],
      logger: silentLogger,
      ownership: { leases: { workerId: "worker-a", sliceCount: 8, maxMovesPerRound: 2 } },
    });
    expect(a.ownership).toBeInstanceOf(SliceLeaseManager);
    await a.start();
    const leases = a.ownership as SliceLeaseManager;
    expect(leases.ownedSlices()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]); // alone: every slice, in bounded rounds
    expect(await a.send("counter/1", { type: "Add", n: 2 })).toMatchObject({ version: 1, reply: 2 });
    await a.stop();
    const released = await journal.listDocuments(SLICE_LEASES);
    expect(released).toHaveLength(8);
    for (const lease of released) expect(lease.doc).toMatchObject({ owner: null });

    const b = createHost({
      journal,
      actors: [counter],
      logger: silentLogger,
      ownership: { leases: { workerId: "worker-b", sliceCount: 8 } },
    });
    await b.start();
    expect((b.ownership as SliceLeaseManager).ownedSlices()).toHaveLength(8);
    expect(await b.send("counter/1", { type: "Add", n: 3 })).toMatchObject({ version: 2, reply: 5 });
    await b.stop();
  });

  it("runs only the slices of an Ownership it is given, refusing the others", async () => {
    const everything = ownsEverything(4);
    const slice = sliceOfAddress("counter/1", 4);
    const host = createHost({
      journal: memoryJournal({ sliceCount: 4 }),
      actors: [counter],
      logger: silentLogger,
      ownership: { ...everything, owns: (s) => s !== slice },
    });
    await host.start();
    // The runtime refuses it; the host's send would forward it to the owner (see routing tests).
    await expect(host.runtime.send("counter/1", { type: "Add", n: 1 })).rejects.toBeInstanceOf(NotOwnerError);
    await host.stop();
  });
});
