import { describe, expect, it } from "vitest";
import { type BatchOutcome, GroupCommitter } from "../../src/journal/group-commit.js";

/** The batching itself, over a fake store that records what each batch carried. */
describe("group committer", () => {
  const store = (answer: (item: number, batch: number) => BatchOutcome<string>) => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    let gate = Promise.resolve();
    const committer = new GroupCommitter<number, string>(
      async (items) => {
        batches.push(items);
        await gate;
        return items.map((item) => answer(item, batches.length));
      },
      { maxBatch: 4 },
    );
    const hold = () => {
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return () => release();
    };
    return { committer, batches, hold };
  };

  it("sends the first commit at once and the ones that arrive meanwhile together, at most maxBatch at a time", async () => {
    const { committer, batches, hold } = store((item) => ({ ok: `r${item}` }));
    const release = hold();
    const first = committer.submit(0);
    const rest = [1, 2, 3, 4, 5, 6].map((i) => committer.submit(i));
    release();
    expect(await Promise.all([first, ...rest])).toEqual(["r0", "r1", "r2", "r3", "r4", "r5", "r6"]);
    expect(batches).toEqual([[0], [1, 2, 3, 4], [5, 6]]);
    expect(committer.stats).toMatchObject({ batches: 3, commits: 7, largest: 4 });
    expect([...committer.stats.sizes]).toEqual([
      [1, 1],
      [4, 1],
      [2, 1],
    ]);
  });

  it("gives each commit its own fate, and every commit of a batch the batch's error when the store throws", async () => {
    const committer = new GroupCommitter<number, number>(async (items) => {
      if (items.includes(99)) throw new Error("connection lost");
      return items.map((i) => (i % 2 ? { error: new Error(`odd ${i}`) } : { ok: i }));
    });
    const outcomes = await Promise.allSettled([1, 2, 3].map((i) => committer.submit(i)));
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled", "rejected"]);
    // 0 goes alone; 99 and 4 form the next batch, which the store loses as a whole.
    const [alone, ...lost] = await Promise.allSettled([0, 99, 4].map((i) => committer.submit(i)));
    expect(alone).toEqual({ status: "fulfilled", value: 0 });
    expect(lost.map((o) => (o as PromiseRejectedResult).reason.message)).toEqual([
      "connection lost",
      "connection lost",
    ]);
  });

  it("queues a commit answered `retry` again, ahead of newer ones, until its retries run out", async () => {
    let tries = 0;
    const committer = new GroupCommitter<string, string>(
      async (items) =>
        items.map((item) => (item === "racy" && ++tries < 3 ? { retry: new Error("raced") } : { ok: item })),
      { maxRetries: 5 },
    );
    expect(await committer.submit("racy")).toBe("racy");
    expect(tries).toBe(3);
    const stubborn = new GroupCommitter<string, string>(
      async (items) => items.map(() => ({ retry: new Error("raced") })),
      {
        maxRetries: 2,
      },
    );
    await expect(stubborn.submit("x")).rejects.toThrow("raced");
    expect(stubborn.stats.batches).toBe(3);
  });

  it("with several batches in flight, holds back a commit sharing a key with one in flight, and keeps submit order per key", async () => {
    const batches: string[][] = [];
    const gates: (() => void)[] = [];
    const committer = new GroupCommitter<string, string>(
      async (items) => {
        batches.push(items);
        await new Promise<void>((resolve) => gates.push(resolve));
        return items.map((item) => ({ ok: item }));
      },
      { maxInFlight: 2, keysOf: (item) => [item.split(":")[0] as string] },
    );
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const a1 = committer.submit("a:1");
    const rest = ["b:1", "a:2", "c:1", "a:3"].map((item) => committer.submit(item));
    // a:1 and b:1 each left at once, in the two slots; the others queue.
    expect(batches).toEqual([["a:1"], ["b:1"]]);
    gates[1]?.();
    await rest[0];
    await settle();
    // A slot is free but a:1 is still in flight: only c:1 goes; a:2 and a:3 wait, in order.
    expect(batches).toEqual([["a:1"], ["b:1"], ["c:1"]]);
    gates[0]?.();
    await a1;
    await settle();
    expect(batches[3]).toEqual(["a:2", "a:3"]);
    gates[2]?.();
    gates[3]?.();
    expect(await Promise.all(rest)).toEqual(["b:1", "a:2", "c:1", "a:3"]);
  });
});
