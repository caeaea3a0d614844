import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { partitionUnsupported } from "../../examples/shop/demo/netns.js";
import { runDemo } from "../../examples/shop/demo/run-demo.js";
import { freshPgSchema, PG_URL } from "../support/services.js";

// A network partition, not a kill: two shop workers, each on a network namespace of its own, share
// one PostgreSQL journal (the journal transport, so no NATS stream shared with other test files).
// In the middle of the run worker 2 loses its link to PostgreSQL for 5 s: packets vanish, its open
// connections stall and its new ones hang, while it still holds effect claims (lease 3 s) and the
// client keeps sending it orders. Then the link comes back and its stalled writes arrive late. The
// audit from the providers' ledgers must be clean. Needs root and iproute2: where namespaces cannot
// be made the test fails and says why; it is never skipped.

const ORDERS = 30;
// About 30 s on an idle 2-core machine; the budget is for a loaded one (helpers share its cores).
const TIMEOUT_MS = 150_000;

let dir: string;
let schema: Awaited<ReturnType<typeof freshPgSchema>> | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "oncely-partition-"));
});
afterAll(async () => {
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a worker cut off from PostgreSQL mid-run", () => {
  it(
    "loses nothing and charges nothing twice; the cut was real (silence, retransmits) and the worker came back",
    async () => {
      const unsupported = await partitionUnsupported();
      if (unsupported) throw new Error(`cannot run the partition test: ${unsupported}`);
      schema = await freshPgSchema("partition");
      const events: string[] = [];
      const result = await runDemo({
        orders: ORDERS,
        seed: 7,
        faults: "none",
        db: PG_URL,
        pgSchema: schema.schema,
        sqlitePath: join(dir, "unused.db"),
        workers: 2,
        // Paced, so the cut lands while orders are still arriving and every one is in flight somewhere.
        arrivalMs: 100,
        partition: [{ worker: 1, link: "postgres", atMs: 1_000, forMs: 5_000 }],
        onPartitionEvent: (line) => events.push(line),
        timeoutMs: 120_000,
      });

      const failed = result.report.checks
        .filter((c) => !c.ok)
        .map((c) => `${c.name}: ${c.violations.slice(0, 3).join("; ")}`);
      expect(failed).toEqual([]);
      expect(result.timedOut).toBe(false);
      expect(result.report.orders.placed).toBe(ORDERS);

      // The cut happened, in the middle of the run, and was a cut: nothing the worker sent crossed its
      // link to PostgreSQL while it lasted, yet traffic was under way on it. A link left up fails here.
      expect(events.length, events.join("\n")).toBe(2);
      const [cut] = result.partitions;
      expect(cut, JSON.stringify(result.partitions)).toBeDefined();
      if (!cut) return;
      expect(cut.link).toBe("postgres");
      expect(cut.atCut.terminal, "the cut came after every order had ended").toBeLessThan(ORDERS);
      expect(cut.bytesWhileCut, "bytes from the cut worker crossed its PostgreSQL link").toBe(0);
      // Traffic was under way: the worker retransmitted or its link dropped what it sent, or PostgreSQL's
      // answers to it waited on the host's side (when every connection of the worker awaited an answer at
      // the cut, it sends nothing more).
      const stuck = cut.retransmitsWhileCut + cut.packetsDroppedWhileCut + cut.answersHeldWhileCut;
      expect(stuck, `nothing was under way on the cut link: ${JSON.stringify(cut)}`).toBeGreaterThan(0);
      // And it came back: after the heal its connections carried traffic again.
      expect(cut.bytesAfterHeal).toBeGreaterThan(0);
    },
    TIMEOUT_MS,
  );
});
