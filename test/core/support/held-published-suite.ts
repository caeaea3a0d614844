import { expect, it } from "vitest";
import { InjectedFault } from "../../../src/base/errors.js";
import { PUBLISHED_COUNTER } from "../../../src/core/published-versions.js";
import { defineActor, type Journal, Runtime } from "../../../src/index.js";
import { ArmableFaults } from "../../../src/testing/index.js";

type NotesCommand = { type: "Note" } | { type: "Announce" };

/** Publishes for its own aggregate: one event appended with each `Note`, none with an `Announce`. */
const notes = defineActor<number, NotesCommand, { type: "Noted" }>({
  type: "notes",
  initialState: () => 0,
  evolve: (n) => n + 1,
  decide: (command, _state, { id, messageId }) => {
    const event = { type: "Announced", source: "notes", aggregateId: id, payload: {} };
    if (command.type === "Note")
      return { events: [{ type: "Noted" }], publish: [{ ...event, eventId: `${messageId}` }] };
    // No event appended: only the published count's guard orders two of these.
    return {
      publish: [
        { ...event, eventId: `${messageId}:a` },
        { ...event, eventId: `${messageId}:b` },
      ],
    };
  },
});

/** Another actor publishing for the aggregate `notes/1`, so the two share its published sequence. */
const teller = defineActor<null, { type: "Tell" }, { type: "Told" }>({
  type: "teller",
  initialState: () => null,
  evolve: (s) => s,
  decide: (_command, _state, { messageId }) => ({
    publish: [{ eventId: `${messageId}`, type: "Told", source: "notes", aggregateId: "1", payload: {} }],
  }),
});

/**
 * The journal the runtime sees: counts its reads of published counts, and fails the next commit
 * when asked, before it reaches the journal ("lost") or after it landed ("unknown", the reply lost).
 */
function watched(journal: Journal) {
  const watch = { counterReads: 0, failNextCommit: undefined as "lost" | "unknown" | undefined };
  const wrapped = new Proxy(journal, {
    get(target, key) {
      if (key === "getCheckpoint") {
        return (consumer: string, source: string) => {
          if (consumer === PUBLISHED_COUNTER) watch.counterReads++;
          return target.getCheckpoint(consumer, source);
        };
      }
      if (key === "commit") {
        return async (commit: Parameters<Journal["commit"]>[0]) => {
          const fail = watch.failNextCommit;
          watch.failNextCommit = undefined;
          if (fail === "lost") throw new Error("connection lost before the commit was sent");
          const result = await target.commit(commit);
          if (fail === "unknown") throw new Error("connection lost before the commit's reply");
          return result;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return Object.assign(watch, { journal: wrapped });
}

/** Stamped version of each published event, by event id, in the outbox's order. */
async function stamped(journal: Journal): Promise<Record<string, number | undefined>> {
  const rows = await journal.listOutbox({});
  return Object.fromEntries(
    rows
      .filter((row) => row.category === "event")
      .map((row) => [row.id, (row.payload as { aggregateVersion?: number }).aggregateVersion]),
  );
}

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** Published counts held by an actor's activation (`stampPublished`), on the journal `open` gives. */
export function heldPublishedSuite(open: () => Promise<{ journal: Journal; close: () => Promise<void> }>): void {
  it("a new actor reads no published count; one recovered reads it once, at its first publish", async () => {
    const { journal, close } = await open();
    try {
      const watch = watched(journal);
      const runtime = new Runtime({ journal: watch.journal, actors: [notes] });
      // Held since its stream was empty: its own aggregate's count starts at 0, unread.
      for (let i = 1; i <= 5; i++) await runtime.send("notes/1", { type: "Note" }, { messageId: `m${i}` });
      expect(watch.counterReads).toBe(0);
      runtime.evict("notes/1"); // the held count goes with the activation
      await runtime.send("notes/1", { type: "Note" }, { messageId: "m6" });
      await runtime.send("notes/1", { type: "Note" }, { messageId: "m7" });
      expect(watch.counterReads).toBe(1);
      expect(await stamped(journal)).toEqual({ m1: 1, m2: 2, m3: 3, m4: 4, m5: 5, m6: 6, m7: 7 });
      expect(runtime.stats.conflicts).toBe(0);
    } finally {
      await close();
    }
  });

  it("a new actor publishing where another already did is refused by the count's guard, reads, and numbers on", async () => {
    const { journal, close } = await open();
    try {
      const watch = watched(journal);
      const runtime = new Runtime({ journal: watch.journal, actors: [notes, teller] });
      await runtime.send("teller/x", { type: "Tell" }, { messageId: "x1" });
      await runtime.send("teller/x", { type: "Tell" }, { messageId: "x2" });
      // notes/1 is new, and guesses 0 for its aggregate's count: the guard refuses, the retry reads 2.
      await runtime.send("notes/1", { type: "Note" }, { messageId: "m1" });
      await runtime.send("notes/1", { type: "Note" }, { messageId: "m2" });
      expect(await stamped(journal)).toEqual({ x1: 1, x2: 2, m1: 3, m2: 4 });
      expect(runtime.stats.conflicts).toBe(1);
      expect(watch.counterReads).toBe(1);
      expect((await runtime.state<number>("notes/1")).state).toBe(2);
    } finally {
      await close();
    }
  });

  it("two runtimes publishing in turn for one source number it 1..N: a stale held count is refused and read again", async () => {
    const { journal, close } = await open();
    try {
      const a = new Runtime({ journal, actors: [notes, teller] });
      const b = new Runtime({ journal, actors: [notes, teller] });
      const order: string[] = [];
      for (let round = 0; round < 4; round++) {
        // One actor on two workers (an Announce appends no event: only the count's guard orders them),
        // then two actors publishing for the same aggregate.
        await a.send("notes/1", { type: "Announce" }, { messageId: `a${round}` });
        await b.send("notes/1", { type: "Announce" }, { messageId: `b${round}` });
        await a.send("teller/x", { type: "Tell" }, { messageId: `x${round}` });
        await b.send("teller/y", { type: "Tell" }, { messageId: `y${round}` });
        order.push(`a${round}:a`, `a${round}:b`, `b${round}:a`, `b${round}:b`, `x${round}`, `y${round}`);
      }
      const versions = await stamped(journal);
      expect(order.map((id) => versions[id])).toEqual(oneTo(24));
      // Every send after the first of each activation found its held count stale.
      expect(a.stats.conflicts + b.stats.conflicts).toBeGreaterThan(0);

      // And all at once: the guard orders them, whoever's count is stale decides again.
      await Promise.all([
        a.send("notes/1", { type: "Announce" }, { messageId: "a-last" }),
        b.send("notes/1", { type: "Announce" }, { messageId: "b-last" }),
        a.send("teller/x", { type: "Tell" }, { messageId: "x-last" }),
        b.send("teller/y", { type: "Tell" }, { messageId: "y-last" }),
      ]);
      expect(Object.values(await stamped(journal)).sort((x = 0, y = 0) => x - y)).toEqual(oneTo(30));
    } finally {
      await close();
    }
  });

  it("a commit that failed, or whose fate is unknown, leaves no advanced count in memory", async () => {
    const { journal, close } = await open();
    try {
      const watch = watched(journal);
      const faults = new ArmableFaults();
      const runtime = new Runtime({ journal: watch.journal, actors: [notes], faults });
      await runtime.send("notes/1", { type: "Note" }, { messageId: "m1" });

      // Stamped, then failed before the commit: the activation stays, its count where the journal's is.
      faults.arm("commit.before");
      await expect(runtime.send("notes/1", { type: "Note" }, { messageId: "m2" })).rejects.toThrow(InjectedFault);
      await runtime.send("notes/1", { type: "Note" }, { messageId: "m3" });
      expect(watch.counterReads).toBe(0); // a new actor's first count is not read (the test above)

      // The commit never reached the journal: the activation and its count are dropped, and read again.
      watch.failNextCommit = "lost";
      await expect(runtime.send("notes/1", { type: "Note" }, { messageId: "m4" })).rejects.toThrow("connection lost");
      await runtime.send("notes/1", { type: "Note" }, { messageId: "m5" });
      expect(watch.counterReads).toBe(1);

      // The commit landed but its caller was not told: the count is read again, and goes on after it.
      watch.failNextCommit = "unknown";
      await expect(runtime.send("notes/1", { type: "Note" }, { messageId: "m6" })).rejects.toThrow("connection lost");
      await runtime.send("notes/1", { type: "Note" }, { messageId: "m7" });
      expect(watch.counterReads).toBe(2);

      expect(await stamped(journal)).toEqual({ m1: 1, m3: 2, m5: 3, m6: 4, m7: 5 });
      expect(runtime.stats.conflicts).toBe(0); // no count held past the journal's
    } finally {
      await close();
    }
  });
}
