import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runDemo } from "../../examples/shop/demo/run-demo.js";
import { freshPgSchema, NATS_URL, PG_URL, probeNats, probePostgres } from "../support/services.js";

// The chaos run in CI's budget (`npm run chaos` is the long version): three worker processes on
// one PostgreSQL journal and NATS, workers killed at random, every PostgreSQL connection of the
// workers terminated again and again, heavy provider faults; then the audit from the ledgers.
const postgres = await probePostgres();
const nats = await probeNats();
const ready = postgres.available && nats.available;
const reason = [postgres.reason, nats.reason].filter(Boolean).join("; ");

describe.skipIf(!ready)(`chaos run${ready ? "" : ` (skipped: ${reason})`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-chaos-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("3 workers, kills and connection restarts: every order ends, no double effect, nothing lost", async () => {
    const { schema, drop } = await freshPgSchema("chaos");
    try {
      const orders = 30;
      const result = await runDemo({
        orders,
        seed: 97,
        faults: "heavy",
        db: PG_URL,
        pgSchema: schema,
        transport: "nats",
        natsUrl: NATS_URL,
        workers: 3,
        pgConnectionRestartMs: 1500,
        sqlitePath: join(dir, "unused.db"),
      });
      const failed = result.report.checks
        .filter((c) => !c.ok)
        .map((c) => `${c.name}: ${c.violations.slice(0, 3).join("; ")}`);
      expect(failed).toEqual([]);
      expect(result.timedOut).toBe(false);
      expect(result.report.orders.placed).toBe(orders);
      expect(result.workers).toBe(3);
      // The chaos really happened: workers died and connections were cut while orders were in flight.
      expect(result.report.worker.killedByParent + result.report.worker.killedAtFaultPoint).toBeGreaterThan(0);
      expect(result.pgRestarts).toBeGreaterThan(0);
    } finally {
      await drop();
    }
  });
});
