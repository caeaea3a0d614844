import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { DEFAULT_INBOX_RETENTION_MS, InboxRetention, pruneInbox } from "../../src/retention/inbox.js";
import { SimulatedClock } from "../../src/testing/clock.js";

describe("inbox retention", () => {
  it("defaults to 7 days", () => {
    expect(DEFAULT_INBOX_RETENTION_MS).toBe(7 * 24 * 60 * 60_000);
    expect(new InboxRetention({ journal: memoryJournal() }).retentionMs).toBe(DEFAULT_INBOX_RETENTION_MS);
  });

  it("refuses a retention that is not a positive duration", async () => {
    expect(() => new InboxRetention({ journal: memoryJournal(), retentionMs: 0 })).toThrow(InvalidInputError);
    await expect(pruneInbox(memoryJournal(), { now: 1, retentionMs: -5 })).rejects.toThrow(InvalidInputError);
  });

  it("property: pruning never touches rows younger than the window, and removes every older one", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 0, max: 2_000 }),
        async (times, retentionMs, now) => {
          const journal = memoryJournal();
          for (const [i, t] of times.entries()) {
            await journal.commit({ inbox: { consumer: "c/1", messageId: `m${i}`, reply: i }, now: t });
          }
          const removed = await pruneInbox(journal, { now, retentionMs });
          let kept = 0;
          for (const [i, t] of times.entries()) {
            const present = (await journal.getInbox("c/1", `m${i}`)) !== undefined;
            expect(present).toBe(t >= now - retentionMs);
            if (present) kept++;
          }
          expect(removed + kept).toBe(times.length);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("the job prunes on its own schedule using the injected clock", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock(0);
    await journal.commit({ inbox: { consumer: "c/1", messageId: "a", reply: null }, now: 0 });
    const job = new InboxRetention({ journal, clock, retentionMs: 1_000, intervalMs: 500 });
    job.start();
    await new Promise((r) => setImmediate(r));
    expect(await journal.getInbox("c/1", "a")).toBeDefined();
    clock.advance(1_500);
    for (let i = 0; i < 10 && (await journal.getInbox("c/1", "a")); i++) await new Promise((r) => setImmediate(r));
    expect(await journal.getInbox("c/1", "a")).toBeUndefined();
    await job.stop();
  });
});
