import { describe, expect, it } from "vitest";
import { memoryJournal } from "../../src/journal/memory.js";
import { SliceLeaseStore } from "../../src/ownership/lease-store.js";

describe("SliceLeaseStore.acquire", () => {
  it("takes a slice never leased only if nobody leased it since the snapshot the caller planned on", async () => {
    const journal = memoryJournal({ sliceCount: 4 });
    const a = new SliceLeaseStore(journal);
    const b = new SliceLeaseStore(journal);
    // Both workers start at once: each read the leases, with slice 0 never leased.
    const seenByA = (await a.leases()).get(0);
    const seenByB = (await b.leases()).get(0);
    expect([seenByA, seenByB]).toEqual([undefined, undefined]);
    const tokenB = await b.acquire(0, seenByB, "b", 10_000, 1);
    expect(tokenB).toBe(1);
    // a planned on the same empty snapshot: taking slice 0 now would take it from b.
    expect(await a.acquire(0, seenByA, "a", 10_000, 2)).toBeUndefined();
    expect(await b.renew(new Map([[0, tokenB as number]]), "b", 20_000, 3)).toEqual([]);
    expect((await a.leases()).get(0)).toMatchObject({ owner: "b", token: 1 });
  });

  it("still takes a slice whose lease document is gone while its fence stays (removed by hand)", async () => {
    const journal = memoryJournal({ sliceCount: 4 });
    const store = new SliceLeaseStore(journal);
    expect(await store.acquire(1, undefined, "a", 10_000, 1)).toBe(1);
    await journal.commit({ documents: [{ collection: "oncely.slice-leases", id: "1", doc: null }], now: 2 });
    expect((await store.leases()).get(1)).toBeUndefined();
    expect(await store.acquire(1, undefined, "b", 10_000, 3)).toBe(2);
  });
});
