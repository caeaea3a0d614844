import { describe, expect, it } from "vitest";
import { keepCommits, replayInto } from "../../bench/commit-replay.js";
import { STEPS, setPathCutBefore } from "../../bench/commit-steps.js";
import { tables } from "../../src/postgres/tables.js";
import { probePostgres } from "../support/services.js";

const service = await probePostgres();

describe("the commit step breakdown's cuts", () => {
  it("finds every step it names in the set function, and returns just before it", () => {
    for (const step of STEPS) {
      const sql = setPathCutBefore(tables("s"), step.before);
      if (step.before === undefined) {
        expect(sql).not.toContain("RETURN;\n");
        continue;
      }
      expect(sql).toContain(`RETURN;\n${step.before}`);
    }
  });

  it("names a step the set function does not have: a clear error", () => {
    expect(() => setPathCutBefore(tables("s"), "  -- 9. ")).toThrow(/no step opening with "-- 9\."/);
  });
});

describe.skipIf(!service.available)(
  `the commit step breakdown's replays${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    it("writes nothing from the cut step on, and everything when uncut", async () => {
      const { kept, ran } = await keepCommits({ orders: 10, inflight: 5 });
      expect(ran).toBe(15);
      const beforeEvents = await replayInto(kept, (t) => setPathCutBefore(t, "  -- 4. "));
      expect(beforeEvents.events).toBe(0);
      const beforeDone = await replayInto(kept, (t) => setPathCutBefore(t, "  -- 6. "));
      expect(beforeDone.events).toBe(75);
      expect(beforeDone.effectsDone).toBe(0);
      const whole = await replayInto(kept, (t) => setPathCutBefore(t, undefined));
      expect(whole.events).toBe(75);
      expect(whole.effectsDone).toBe(60);
    });
  },
);
