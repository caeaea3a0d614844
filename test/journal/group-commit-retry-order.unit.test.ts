import { describe, expect, it } from "vitest";
import { type BatchOutcome, type GroupCommitOptions, GroupCommitter } from "../../src/journal/group-commit.js";

/**
 * A commit answered `retry` (rolled back alone: a deadlock, an append race) is queued again ahead
 * of the commits that arrived while its batch was in flight, so writes to one stream are applied
 * in submit order. The fake store applies an item when it answers `ok`, in batch order.
 */
describe("group committer: a retried commit keeps its place", () => {
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  /** Every batch waits for its own gate; `racy` items are answered `retry` once; `applied` is what the store applied, in order. */
  const store = (options: GroupCommitOptions<string>, racy: Set<string>) => {
    const applied: string[] = [];
    const gates: (() => void)[] = [];
    const committer = new GroupCommitter<string, string>(async (items) => {
      await new Promise<void>((resolve) => gates.push(resolve));
      return items.map((item): BatchOutcome<string> => {
        if (racy.delete(item)) return { retry: new Error(`raced: ${item}`) };
        applied.push(item);
        return { ok: item };
      });
    }, options);
    return { committer, applied, gates };
  };

  const cases: [string, GroupCommitOptions<string>][] = [
    ["one batch in flight", {}],
    ["two batches in flight, keyed by stream", { maxInFlight: 2, keysOf: (item) => [item.split(":")[0] as string] }],
  ];
  for (const [label, options] of cases) {
    it(`applies one stream's commits in submit order when the first is retried (${label})`, async () => {
      const { committer, applied, gates } = store(options, new Set(["a:1"]));
      const first = committer.submit("a:1");
      // Arrive while a:1's batch is in flight.
      const later = ["a:2", "a:3"].map((item) => committer.submit(item));
      for (let round = 0; round < 10; round++) {
        for (const gate of gates.splice(0)) gate();
        await settle();
      }
      expect(await Promise.all([first, ...later])).toEqual(["a:1", "a:2", "a:3"]);
      expect(applied).toEqual(["a:1", "a:2", "a:3"]);
    });
  }
});
