import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createHost, defineActor } from "../../src/index.js";
import { memoryJournal, SimulatedClock } from "../../src/testing/index.js";

/**
 * Property: however a wait's looks interleave with commits of this process (which it follows
 * from what they appended) and commits of another (straight to the journal, which it learns of
 * by a read), and whatever order its reads answer in (a poll's read may answer after later
 * commits landed), `waitFor` resolves with a state the journal held at the version it names,
 * one that satisfies the predicate; when only this process commits, in the turn of the commit
 * that satisfies it; and, once reads answer and the poll runs, whenever the journal satisfies it.
 */

type Counter = { count: number };
const counter = defineActor<Counter, { type: "Add" }, { type: "Added" }>({
  type: "counter",
  initialState: () => ({ count: 0 }),
  evolve: (state) => ({ count: state.count + 1 }),
  decide: () => ({ events: [{ type: "Added" }] }),
});

type Step =
  | { kind: "here" } // a commit of this process
  | { kind: "elsewhere"; events: number } // another process's commit
  | { kind: "time"; ms: number } // the clock moves: polls run
  | { kind: "held poll" } // the poll runs, its read held until a release
  | { kind: "release" }; // the held reads answer

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "here" as const }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }).map((events) => ({ kind: "elsewhere" as const, events })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 120 }).map((ms) => ({ kind: "time" as const, ms })) },
  { weight: 2, arbitrary: fc.constant({ kind: "held poll" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "release" as const }) },
);

/** Lets every promise chain the last step started run (the memory journal answers in microtasks). */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
}

const ADDRESS = "counter/p";

describe("waitFor under interleaved commits, polls and late reads (property)", () => {
  it("resolves with a state of the journal that satisfies it, at once for a commit of this process", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.array(step, { maxLength: 14 }), async (target, steps) => {
        const journal = memoryJournal();
        const readStream = journal.readStream.bind(journal);
        let holding = false;
        const held: (() => void)[] = [];
        journal.readStream = async (stream: string, ...rest: [number?, number?]) => {
          const answer = await readStream(stream, ...rest);
          if (holding) await new Promise<void>((resolve) => held.push(resolve));
          return answer;
        };
        const release = async () => {
          for (const open of held.splice(0)) open();
          await settle();
        };
        const clock = new SimulatedClock(0);
        const host = createHost({ journal, actors: [counter], clock, name: "interleavings" });
        const seen: { value?: { state: Counter; version: number }; error?: unknown } = {};
        host
          .waitFor<Counter>(ADDRESS, (state) => state.count >= target, { timeoutMs: 3_600_000 })
          .then((value) => {
            seen.value = value;
          })
          .catch((error: unknown) => {
            seen.error = error;
          });
        await settle(); // the first look
        let elsewhere = 0;
        for (const next of steps) {
          if (next.kind === "here") {
            await host.send(ADDRESS, { type: "Add" });
            const version = await journal.streamVersion(ADDRESS);
            // Only this process committed: the commit that satisfies the wait resolved it before its caller went on.
            if (elsewhere === 0 && version >= target) expect(seen.value).toBeDefined();
          } else if (next.kind === "elsewhere") {
            elsewhere++;
            const version = await journal.streamVersion(ADDRESS);
            const events = Array.from({ length: next.events }, (_, i) => ({
              eventId: `elsewhere-${version + i + 1}`,
              type: "Added",
              data: { type: "Added" },
            }));
            await journal.commit({ stream: ADDRESS, expectedVersion: version, events, now: clock.now() });
          } else if (next.kind === "time") {
            clock.advance(next.ms);
            await settle();
          } else if (next.kind === "held poll") {
            holding = true;
            clock.advance(1_000); // past the longest interval: the poll runs now
            await settle();
            holding = false;
          } else await release();
          expect(seen.error).toBeUndefined();
          if (seen.value) {
            // A state the journal held at that version (each event adds one), satisfying the predicate.
            expect(seen.value.state.count).toBe(seen.value.version);
            expect(seen.value.state.count).toBeGreaterThanOrEqual(target);
            if (elsewhere === 0) expect(seen.value.version).toBe(target);
          }
        }
        // Reads answer and the poll runs: a journal that satisfies the wait resolves it.
        await release();
        clock.advance(1_000);
        await settle();
        await release();
        const version = await journal.streamVersion(ADDRESS);
        expect(seen.value !== undefined).toBe(version >= target);
        await host.stop();
        await release();
      }),
      { numRuns: 200 },
    );
  });
});
