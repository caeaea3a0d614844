import { describe, expect, it } from "vitest";
import { HELD_PUBLISHED_SOURCES, holdPublished, stampPublished } from "../../src/core/published-versions.js";
import { defineActor, Runtime } from "../../src/index.js";
import type { Journal } from "../../src/journal/types.js";
import { memoryJournal } from "../../src/testing/index.js";

type Command = { type: "Note"; publish: boolean } | { type: "Announce" } | { type: "Numbered"; version: number };

/** Publishes on some commands only, so its stream version and its published count part ways. */
const notes = defineActor<number, Command, { type: "Noted" }>({
  type: "notes",
  initialState: () => 0,
  evolve: (n) => n + 1,
  decide: (command, _state, { id, messageId }) => {
    const event = { type: "Announced", source: "notes", aggregateId: id, payload: {} };
    switch (command.type) {
      case "Note":
        return {
          events: [{ type: "Noted" }, { type: "Noted" }],
          publish: command.publish ? [{ ...event, eventId: `notes:${id}:${messageId}` }] : [],
        };
      case "Announce": // publishes without appending an event: only the count's guard orders two of these
        return {
          publish: [
            { ...event, eventId: `notes:${id}:${messageId}:a` },
            { ...event, eventId: `notes:${id}:${messageId}:b` },
          ],
        };
      case "Numbered":
        return { publish: [{ ...event, eventId: `notes:${id}:${messageId}`, aggregateVersion: command.version }] };
    }
  },
});

async function publishedVersions(journal: Journal): Promise<Record<string, number | undefined>> {
  const rows = await journal.listOutbox({});
  return Object.fromEntries(
    rows
      .filter((row) => row.category === "event")
      .map((row) => [row.id, (row.payload as { aggregateVersion?: number }).aggregateVersion]),
  );
}

describe("published events stamped by the runtime", () => {
  it("numbers an actor's publishes 1, 2, 3 with no holes, whatever its stream version", async () => {
    const journal = memoryJournal();
    const runtime = new Runtime({ journal, actors: [notes] });
    await runtime.send("notes/1", { type: "Note", publish: true }, { messageId: "m1" }); // stream v2
    await runtime.send("notes/1", { type: "Note", publish: false }, { messageId: "m2" }); // stream v4, nothing published
    await runtime.send("notes/1", { type: "Note", publish: true }, { messageId: "m3" }); // stream v6
    await runtime.send("notes/1", { type: "Announce" }, { messageId: "m4" });
    await runtime.send("notes/2", { type: "Note", publish: true }, { messageId: "m1" }); // another actor: its own count
    expect(await publishedVersions(journal)).toEqual({
      "notes:1:m1": 1,
      "notes:1:m3": 2,
      "notes:1:m4:a": 3,
      "notes:1:m4:b": 4,
      "notes:2:m1": 1,
    });
  });

  it("the count survives a restart: a new runtime goes on from the journal", async () => {
    const journal = memoryJournal();
    await new Runtime({ journal, actors: [notes] }).send("notes/1", { type: "Announce" }, { messageId: "m1" });
    await new Runtime({ journal, actors: [notes] }).send("notes/1", { type: "Announce" }, { messageId: "m2" });
    expect(Object.values(await publishedVersions(journal))).toEqual([1, 2, 3, 4]);
  });

  it("two runtimes publishing for one actor at once never stamp one version twice", async () => {
    const journal = memoryJournal();
    const a = new Runtime({ journal, actors: [notes] });
    const b = new Runtime({ journal, actors: [notes] });
    await Promise.all([
      a.send("notes/1", { type: "Announce" }, { messageId: "a" }),
      b.send("notes/1", { type: "Announce" }, { messageId: "b" }),
    ]);
    expect(Object.values(await publishedVersions(journal)).sort()).toEqual([1, 2, 3, 4]);
  });

  it("counts per source stream (source/aggregateId): two actors publishing for one aggregate share its sequence", async () => {
    const journal = memoryJournal();
    const shared = defineActor<null, { type: "Tell" }, { type: "Told" }>({
      type: "teller",
      initialState: () => null,
      evolve: (s) => s,
      decide: (_c, _s, { id }) => ({
        publish: [{ eventId: `told:${id}`, type: "Told", source: "notes", aggregateId: "1", payload: {} }],
      }),
    });
    const runtime = new Runtime({ journal, actors: [notes, shared] });
    await runtime.send("notes/1", { type: "Note", publish: true }, { messageId: "m1" });
    await runtime.send("teller/a", { type: "Tell" });
    await runtime.send("teller/b", { type: "Tell" });
    expect(await publishedVersions(journal)).toEqual({ "notes:1:m1": 1, "told:a": 2, "told:b": 3 });
  });

  it("an explicit aggregateVersion is kept, and not counted", async () => {
    const journal = memoryJournal();
    const runtime = new Runtime({ journal, actors: [notes] });
    await runtime.send("notes/1", { type: "Numbered", version: 7 }, { messageId: "m1" });
    expect(await publishedVersions(journal)).toEqual({ "notes:1:m1": 7 });
  });

  it("stamps from the counts an activation holds, reads only the others, and holds a bounded number", async () => {
    const reads: string[] = [];
    const journal = {
      getCheckpoint: async (_consumer: string, source: string) => {
        reads.push(source);
        return 10;
      },
    };
    const publish = (aggregateId: string) => ({
      eventId: aggregateId,
      type: "T",
      source: "s",
      aggregateId,
      payload: {},
    });
    const { decision, counters } = await stampPublished(
      journal,
      { publish: [publish("a"), publish("b"), publish("a")] },
      new Map([["s/a", 3]]),
    );
    expect(reads).toEqual(["s/b"]);
    expect(decision.publish?.map((event) => event.aggregateVersion)).toEqual([4, 11, 5]);
    expect(counters.map(({ source, version, expected }) => [source, expected, version])).toEqual([
      ["s/a", 3, 5],
      ["s/b", 10, 11],
    ]);

    let held = holdPublished(undefined, counters);
    expect([...(held ?? [])]).toEqual([
      ["s/a", 5],
      ["s/b", 11],
    ]);
    for (let i = 0; i < HELD_PUBLISHED_SOURCES; i++) {
      held = holdPublished(held, [{ consumer: "c", source: `s/${i}`, version: i, expected: 0 }]);
    }
    held = holdPublished(held, [{ consumer: "c", source: "s/b", version: 12, expected: 11 }]);
    expect(held?.size).toBe(HELD_PUBLISHED_SOURCES);
    expect(held?.has("s/a")).toBe(false); // the least recently written goes first
    expect(held?.get("s/b")).toBe(12);
  });
});
