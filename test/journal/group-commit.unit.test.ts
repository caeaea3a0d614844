import { describe, expect, it } from "vitest";
import { StorageUnavailableError, TerminalStorageError } from "../../src/base/errors.js";
import {
  type BatchOutcome,
  type GroupCommitOptions,
  GroupCommitter,
  wholeOrEachAlone,
} from "../../src/journal/group-commit.js";

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

  /** A store whose every batch waits for its own gate; `batches` is what each carried. */
  const gatedStore = <T>(options: GroupCommitOptions<T>) => {
    const batches: T[][] = [];
    const gates: (() => void)[] = [];
    const committer = new GroupCommitter<T, T>(async (items) => {
      batches.push(items);
      await new Promise<void>((resolve) => gates.push(resolve));
      return items.map((item) => ({ ok: item }));
    }, options);
    return { committer, batches, gates };
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  /**
   * Answers every batch, including those that form from the answers, until none is left waiting.
   * Two turns a round: a batch formed from answers leaves on the turn after they arrive.
   */
  const openUntilIdle = async (gates: (() => void)[]) => {
    for (let opened = 0; opened < gates.length; ) {
      for (; opened < gates.length; opened++) gates[opened]?.();
      await settle();
      await settle();
    }
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

  it("tells its retry listeners each time a commit is queued again, with the store's reason, and not when it gives up", async () => {
    const deadlock = Object.assign(new Error("deadlock detected"), { code: "40P01" });
    const stubborn = new GroupCommitter<string, string>(async (items) => items.map(() => ({ retry: deadlock })), {
      maxRetries: 2,
    });
    const heard: unknown[] = [];
    const off = stubborn.onRetry((reason) => heard.push(reason));
    stubborn.onRetry(() => {
      throw new Error("a listener's own failure");
    });
    await expect(stubborn.submit("x")).rejects.toThrow("deadlock detected");
    expect(heard).toEqual([deadlock, deadlock]);
    off();
    await expect(stubborn.submit("y")).rejects.toThrow("deadlock detected");
    expect(heard).toHaveLength(2);
  });

  it("with several batches in flight, holds back a commit sharing a key with one in flight, and keeps submit order per key", async () => {
    const { committer, batches, gates } = gatedStore<string>({
      maxInFlight: 2,
      keysOf: (item) => [item.split(":")[0] as string],
    });
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

  describe("spreading a burst over batches in flight (spreadOver)", () => {
    /** A store whose every batch waits for its own gate; `batches` is what each carried. */
    /** Spread over three slots, each burst's commits queued until the next turn, as the SQL journals do. */
    const spreadStore = (options: GroupCommitOptions<number>) =>
      gatedStore<number>({ maxInFlight: 3, start: "next-turn", ...options });
    /** A spread committer that has sent a burst of 50 as two batches of 25, both answered. */
    const afterOneBurstOf50 = async () => {
      const store = spreadStore({ spreadOver: 2 });
      const first = range(0, 50).map((i) => store.committer.submit(i));
      await settle();
      for (const open of store.gates) open();
      expect(await Promise.all(first)).toEqual(range(0, 50));
      expect(store.batches).toEqual([range(0, 25), range(25, 50)]);
      return store;
    };
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

    it("splits a burst of 50 into two batches of 25, both in flight at once", async () => {
      const { committer, batches, gates } = spreadStore({ spreadOver: 2 });
      const all = range(0, 50).map((i) => committer.submit(i));
      await settle();
      expect(batches).toEqual([range(0, 25), range(25, 50)]);
      for (const open of gates) open();
      expect(await Promise.all(all)).toEqual(range(0, 50));
    });

    it("keeps the split as answers come back over several turns: a share waits for the rest of itself", async () => {
      const { committer, batches, gates } = spreadStore({ spreadOver: 2 });
      const first = range(0, 50).map((i) => committer.submit(i));
      await settle();
      gates[0]?.(); // the first 25 are answered; their successors arrive in two turns
      await Promise.all(first.slice(0, 25));
      const early = range(50, 60).map((i) => committer.submit(i));
      await settle();
      // Ten queued while 25 are in flight: below the share of 25, so no third batch of ten leaves.
      expect(batches).toHaveLength(2);
      const late = range(60, 75).map((i) => committer.submit(i));
      await settle();
      expect(batches[2]).toEqual(range(50, 75));
      await openUntilIdle(gates);
      expect(await Promise.all([...first, ...early, ...late])).toEqual(range(0, 75));
    });

    it("keeps at most spreadOver batches in flight while spreading, even with a full share waiting", async () => {
      const { committer, batches, gates } = spreadStore({ spreadOver: 2 });
      const first = range(0, 50).map((i) => committer.submit(i));
      await settle();
      // 60 more while both halves are out: a share of the 110 outstanding is 55, and 60 are queued,
      // but the third slot stays free; they leave when a batch returns.
      const more = range(50, 110).map((i) => committer.submit(i));
      await settle();
      expect(batches).toHaveLength(2);
      gates[0]?.();
      await Promise.all(first.slice(0, 25));
      await settle();
      // A slot is back: the next batch takes its share of the 85 outstanding now (60 queued, 25 out).
      expect(batches[2]).toEqual(range(50, 93));
      await openUntilIdle(gates);
      expect(await Promise.all([...first, ...more])).toEqual(range(0, 110));
    });

    it("sizes a share by the recent peak, so a burst that arrives in parts is not cut into ever smaller batches", async () => {
      const { committer, batches, gates } = await afterOneBurstOf50();
      // Nothing in flight, and only 20 of the next 50 have arrived: they leave as ONE batch (a share
      // of the peak of 50), not as two of 10 (a share of the 20 outstanding now).
      const part = range(50, 70).map((i) => committer.submit(i));
      await settle();
      expect(batches.slice(2)).toEqual([range(50, 70)]);
      gates[2]?.();
      expect(await Promise.all(part)).toEqual(range(50, 70));
    });

    it("lets the peak decay by a twentieth a batch, in whole commits, so a lighter load is no longer held back", async () => {
      // From 50, a batch at a time: 47, 44, 41, 38, 36, 34, 32, 30, 28, 26, 24, 22, 20, 19, 18, 17, 16,
      // 15. After 17 lone commits and one more in flight the peak is 15, under twice minSplit, so a
      // burst of 14 takes a free slot beside it, whole; after 16 the peak is 16 and the burst is
      // split: a share of 8, then the rest.
      const lastBatchesAfter = async (lone: number) => {
        const { committer, batches, gates } = await afterOneBurstOf50();
        for (let i = 0; i < lone; i++) {
          const one = committer.submit(100 + i);
          await settle();
          gates[gates.length - 1]?.();
          await one;
        }
        const slow = committer.submit(200);
        await settle();
        const burst = range(300, 314).map((i) => committer.submit(i));
        await settle();
        const last = batches.slice(-2);
        await openUntilIdle(gates);
        expect(await Promise.all([slow, ...burst])).toEqual([200, ...range(300, 314)]);
        return last;
      };
      expect(await lastBatchesAfter(16)).toEqual([range(300, 308), range(308, 314)]);
      expect(await lastBatchesAfter(17)).toEqual([[200], range(300, 314)]);
    });

    it("sends what waits at once when nothing is in flight, and never splits fewer than twice minSplit", async () => {
      const { committer, batches, gates } = spreadStore({ spreadOver: 2, minSplit: 8 });
      const small = range(0, 15).map((i) => committer.submit(i));
      await settle();
      expect(batches).toEqual([range(0, 15)]);
      gates[0]?.();
      expect(await Promise.all(small)).toEqual(range(0, 15));
    });

    it("without spreadOver, a burst leaves as one batch and a later commit takes a free slot at once", async () => {
      const { committer, batches, gates } = spreadStore({});
      const burst = range(0, 50).map((i) => committer.submit(i));
      await settle();
      const lone = committer.submit(50);
      await settle();
      expect(batches).toEqual([range(0, 50), [50]]);
      for (const open of gates) open();
      expect(await Promise.all([...burst, lone])).toEqual(range(0, 51));
    });

    it("refuses an option that is not a positive integer, naming it", () => {
      const write = async (items: number[]) => items.map((i) => ({ ok: i }));
      expect(() => new GroupCommitter(write, { spreadOver: 0 })).toThrow(
        /spreadOver must be a positive integer, got 0/,
      );
      expect(() => new GroupCommitter(write, { maxBatch: 1.5 })).toThrow(/maxBatch must be a positive integer/);
      expect(() => new GroupCommitter(write, { maxInFlight: -1 })).toThrow(/maxInFlight/);
      expect(() => new GroupCommitter(write, { minSplit: Number.NaN })).toThrow(/minSplit/);
    });
  });
});

describe("wholeOrEachAlone", () => {
  const refusing = async (items: string[]) => {
    if (items.some((item) => item.includes("bad"))) throw new TerminalStorageError("refused");
    return items.map((item) => item.toUpperCase());
  };
  const alone = async (item: string) => (await refusing([item]))[0] as string;

  it("answers the batch written whole", async () => {
    expect(await wholeOrEachAlone(["a", "b"], refusing, alone)).toEqual([{ ok: "A" }, { ok: "B" }]);
  });

  it("writes a batch refused as a whole item by item, so that only the refused item fails", async () => {
    const outcomes = await wholeOrEachAlone(["a", "bad", "c"], refusing, alone);
    expect(outcomes[0]).toEqual({ ok: "A" });
    expect((outcomes[1] as { error: unknown }).error).toBeInstanceOf(TerminalStorageError);
    expect(outcomes[2]).toEqual({ ok: "C" });
  });

  it("leaves an ambiguous failure, and a lone item's, to every caller", async () => {
    const lost = async () => {
      throw new StorageUnavailableError("connection lost");
    };
    let alones = 0;
    const counted = async (item: string) => {
      alones++;
      return item;
    };
    await expect(wholeOrEachAlone(["a", "b"], lost, counted)).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(wholeOrEachAlone(["bad"], refusing, counted)).rejects.toBeInstanceOf(TerminalStorageError);
    expect(alones).toBe(0);
  });
});
