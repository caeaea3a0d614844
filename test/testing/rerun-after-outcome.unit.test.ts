import { describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { observeCoverage } from "../../src/testing/simulation/coverage.js";

/** A memory journal seen through the simulator's coverage view, with the violations it reports. */
function observedJournal() {
  const journal = new MemoryJournal();
  const violations: string[] = [];
  const observed = observeCoverage(
    journal,
    () => {},
    (invariant, message) => violations.push(`${invariant}: ${message}`),
  );
  return { journal, violations, observed };
}

/**
 * The simulator's "no-rerun-after-outcome" check: an effect whose final outcome is committed must
 * not be started again by a dispatcher that claimed it after that commit (the planted bug: the
 * outcome's commit leaves the outbox row runnable). A call already in flight under an older claim
 * is legitimate.
 */
describe("an effect started again after its outcome was committed", () => {
  const key = "pay-1";
  const stream = "order:1";

  async function world() {
    const { journal, violations, observed } = observedJournal();
    await journal.commit({
      outbox: [{ id: key, category: "effect", kind: "payment", stream, payload: { input: {} }, notBefore: 0 }],
      now: 0,
    });
    // The outcome's commit, as the planted bug leaves it: recorded in the owner, row not done.
    const commitOutcome = () =>
      journal.commit({ inbox: { consumer: stream, messageId: `${key}#outcome`, reply: null }, now: 1 });
    const claim = (owner: string, now: number) =>
      observed.claimOutbox({ owner, now, leaseMs: 1000, limit: 10, categories: ["effect"] });
    const startAttempt = (owner: string, attempts: number) =>
      observed.updateOutbox(key, owner, { attempts, releaseLease: false }, 2);
    return { violations, commitOutcome, claim, startAttempt };
  }

  it("is reported when the claim came after the outcome's commit", async () => {
    const w = await world();
    await w.commitOutcome();
    expect(await w.claim("dispatcher#1.a", 1)).toHaveLength(1);
    expect(await w.startAttempt("dispatcher#1.a", 1)).toBe(true);
    expect(w.violations).toEqual([
      `no-rerun-after-outcome: dispatcher#1.a started effect ${key} again (attempt 1) under a claim taken after its outcome was committed`,
    ]);
  });

  it("is not reported for a claim taken before the outcome was committed (a stalled call in flight)", async () => {
    const w = await world();
    expect(await w.claim("dispatcher#1.a", 1)).toHaveLength(1);
    await w.commitOutcome();
    expect(await w.startAttempt("dispatcher#1.a", 1)).toBe(true);
    expect(w.violations).toEqual([]);
  });
});

/**
 * The simulator's check that an effect's done transition, its outcome's record (InboxEntry.outcomeOf),
 * is written only by its owner's commit: a worker that marks the row done by an outbox update would
 * leave an outcome no owner ever recorded, which the outcome invariant could no longer tell.
 */
describe("an effect marked done by a worker's update", () => {
  async function world(category: "effect" | "event") {
    const { journal, violations, observed } = observedJournal();
    await journal.commit({
      outbox: [{ id: "row-1", category, kind: "k", stream: "order:1", payload: {}, notBefore: 0 }],
      now: 0,
    });
    expect(await observed.claimOutbox({ owner: "worker#1.a", now: 1, leaseMs: 1000, limit: 1 })).toHaveLength(1);
    expect(await observed.updateOutbox("row-1", "worker#1.a", { status: "done", outcome: "completed" }, 2)).toBe(true);
    return violations;
  }

  it("is reported for an effect", async () => {
    expect(await world("effect")).toEqual([
      "outcome-recorded-once-and-true: worker#1.a marked effect row-1 done outside its owner's commit",
    ]);
  });

  it("is not reported for an event the relay marks published", async () => {
    expect(await world("event")).toEqual([]);
  });
});
