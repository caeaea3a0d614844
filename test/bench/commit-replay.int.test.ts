import { describe, expect, it } from "vitest";
import { replayCommits } from "../../bench/commit-replay.js";
import { probePostgres } from "../support/services.js";

const service = await probePostgres();

describe.skipIf(!service.available)(
  `the commit replay bench${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    it("replays a run's commit statements into a fresh schema and ends with the rows the run wrote", async () => {
      const figures = await replayCommits({ orders: 20, inflight: 5 });
      // 20 timed orders after a warm-up of 5 (the in-flight count), 5 events and 4 finished effects each.
      expect(figures.ordersRun).toBe(25);
      expect(figures.events).toBe(125);
      expect(figures.effectsDone).toBe(100);
      expect(figures.batches).toBeGreaterThan(0);
      expect(figures.walls).toHaveLength(figures.batches);
      expect(figures.commits).toBeGreaterThanOrEqual(figures.batches);
    });
  },
);
