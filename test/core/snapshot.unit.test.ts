import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import { recover } from "../../src/core/recovery.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { type CounterEvent, counter } from "./fixtures/counter.js";

const eventArb: fc.Arbitrary<CounterEvent> = fc.oneof(
  fc.record({ type: fc.constant("Added" as const), amount: fc.integer({ min: -1000, max: 1000 }) }),
  fc.record({ type: fc.constant("NotifyRequested" as const), key: fc.string() }),
);

describe("snapshots", () => {
  it("snapshot + tail equals full replay, for any event sequence and any snapshot point", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventArb, { maxLength: 60 }), fc.nat(), async (events, cut) => {
        const journal = memoryJournal();
        await journal.commit({
          stream: "counter/p",
          expectedVersion: 0,
          events: events.map((data, i) => ({ eventId: `e${i}`, type: data.type, data })),
          now: 0,
        });
        const at = events.length === 0 ? 0 : cut % (events.length + 1);
        const snapshotState = events.slice(0, at).reduce(counter.evolve, counter.initialState("p"));
        await journal.commit({
          stream: "counter/p",
          snapshot: { version: at, schemaVersion: 1, state: snapshotState },
          now: 0,
        });
        const fromSnapshot = await recover(journal, counter, "counter/p", "p", silentLogger);
        const full = events.reduce(counter.evolve, counter.initialState("p"));
        expect(fromSnapshot.fromSnapshot).toBe(true);
        expect(fromSnapshot.state).toEqual(full);
        expect(fromSnapshot.version).toBe(events.length);
      }),
      { numRuns: 200 },
    );
  });

  it("a state round-trips through JSON unchanged", () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        const state = events.reduce(counter.evolve, counter.initialState("p"));
        expect(JSON.parse(JSON.stringify(state))).toEqual(state);
      }),
    );
  });
});
