import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { PUBLISHED_READER_SOURCE } from "../../src/journal/published.js";
import { PublishedRetention } from "../../src/retention/published.js";
import { SimulatedClock } from "../../src/testing/clock.js";

const DAY = 24 * 60 * 60_000;

describe("published log retention", () => {
  it("deletes old entries every reader has passed, in batches, and keeps the rest", async () => {
    const journal = new MemoryJournal();
    const clock = new SimulatedClock();
    const positions: number[] = [];
    for (let i = 0; i < 5; i++)
      positions.push(await journal.appendPublished({ messageId: `m${i}`, subject: "s", body: "{}" }, clock.now()));
    const job = new PublishedRetention({ journal, clock, retentionMs: DAY, batchSize: 2 });
    clock.advance(2 * DAY);
    // No reader registered yet: a consumer subscribing later must still find everything.
    expect(await job.runOnce()).toBe(0);
    const read = (consumer: string, to: number) =>
      journal.commit({ checkpoint: { consumer, source: PUBLISHED_READER_SOURCE, version: to }, now: clock.now() });
    await read("fast", positions[4] as number);
    await read("slow", positions[2] as number);
    expect(await job.runOnce()).toBe(3);
    expect((await journal.readPublished(0)).map((p) => p.messageId)).toEqual(["m3", "m4"]);
    await read("slow", positions[4] as number);
    // Young entries stay, whoever has read them.
    await journal.appendPublished({ messageId: "young", subject: "s", body: "{}" }, clock.now());
    await read("fast", (positions[4] as number) + 1);
    expect(await job.runOnce()).toBe(2);
    expect((await journal.readPublished(0)).map((p) => p.messageId)).toEqual(["young"]);
  });

  it("refuses a batch size that is not a positive integer, naming it", () => {
    const journal = new MemoryJournal();
    expect(() => new PublishedRetention({ journal, batchSize: 0 })).toThrow(InvalidInputError);
    expect(() => new PublishedRetention({ journal, batchSize: 0 })).toThrow(/published log prune batch size/);
  });
});
