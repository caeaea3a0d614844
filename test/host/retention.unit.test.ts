import { describe, expect, it } from "vitest";
import { createHost, InvalidInputError } from "../../src/index.js";
import { memoryJournal, SimulatedClock } from "../../src/testing/index.js";
import { checkout } from "./fixtures/checkout.js";

const DAY = 24 * 60 * 60_000;
const settle = async (done: () => Promise<boolean>) => {
  for (let i = 0; i < 50 && !(await done()); i++) await new Promise((r) => setImmediate(r));
};

describe("createHost({ retention })", () => {
  it("true: the host prunes the inbox, the outbox and the published log on its clock from start to stop", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock(0);
    await journal.commit({ inbox: { consumer: "c/1", messageId: "old", reply: null }, now: 0 });
    const host = createHost({ journal, actors: [checkout], clock, retention: true });
    expect(host.retention.map((job) => job.retentionMs)).toEqual([7 * DAY, 7 * DAY, 7 * DAY]);
    await host.start();
    await settle(async () => false);
    expect(await journal.getInbox("c/1", "old")).toBeDefined();
    // The jobs sleep an hour between runs on the host's clock: past the window, the next run prunes.
    clock.advance(8 * DAY);
    await settle(async () => (await journal.getInbox("c/1", "old")) === undefined);
    expect(await journal.getInbox("c/1", "old")).toBeUndefined();
    await host.stop();
  });

  it("an object tunes each job or leaves it out; absent or false: none", () => {
    const journal = memoryJournal();
    const tuned = createHost({
      journal,
      actors: [checkout],
      retention: { inbox: { retentionMs: 2 * DAY, intervalMs: 60_000 }, outbox: false },
    });
    expect(tuned.retention.map((job) => [job.retentionMs, job.intervalMs])).toEqual([
      [2 * DAY, 60_000],
      [7 * DAY, 60 * 60_000],
    ]);
    expect(createHost({ journal, actors: [checkout] }).retention).toEqual([]);
    expect(createHost({ journal, actors: [checkout], retention: false }).retention).toEqual([]);
    expect(() => createHost({ journal, actors: [checkout], retention: { inbox: { retentionMs: 0 } } })).toThrow(
      InvalidInputError,
    );
  });

  it("exposes the reconciliation queue of its journal", async () => {
    const host = createHost({ journal: memoryJournal(), actors: [checkout] });
    expect(await host.reconciliation.list()).toEqual([]);
    expect(await host.reconciliation.count()).toBe(0);
  });
});
