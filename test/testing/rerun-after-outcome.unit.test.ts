import { describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { observeCoverage } from "../../src/testing/simulation/coverage.js";

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
    const journal = new MemoryJournal();
    const violations: string[] = [];
    const observed = observeCoverage(
      journal,
      () => {},
      (invariant, message) => violations.push(`${invariant}: ${message}`),
    );
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
