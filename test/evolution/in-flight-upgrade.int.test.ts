import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Reconciliation } from "../../src/effects/reconciliation.js";
import type { Journal } from "../../src/journal/types.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { startWorker } from "./fixtures/child.js";
import { chargeKey, mailKey } from "./fixtures/orders-v1.js";
import { type OrderV2State, riskKey } from "./fixtures/orders-v2.js";
import { httpClient, ProviderLedger, serveLedger } from "./fixtures/provider.js";
import type { Sale } from "./fixtures/sales.js";
import { eventually, type ReleaseWorker, startRelease } from "./fixtures/workers.js";

const pg = await probePostgres();
const OLD = ["o1", "o2", "o3", "o4", "o5"];
const NEW = ["n1", "n2"];
const email = (id: string) => `${id}@example.com`;
const amount = (id: string) => 1_000 + Number(id.slice(1));

/**
 * Release 1 runs in a child process and is killed (SIGKILL) with orders in every in-between state;
 * release 2 (renamed and added event fields, new input shapes, a new step for new orders, a new
 * state shape) takes over against the same PostgreSQL journal and the same provider.
 */
describe.skipIf(!pg.available)(
  `in-flight upgrade from release 1 to release 2${pg.available ? "" : ` (${pg.reason})`}`,
  () => {
    let schema: { schema: string; drop: () => Promise<void> };
    let journal: Journal;
    let server: Server;
    let url: string;
    const ledger = new ProviderLedger();
    let v2: ReleaseWorker | undefined;

    beforeAll(async () => {
      schema = await freshPgSchema("in_flight_upgrade");
      journal = postgresJournal({ connectionString: PG_URL, schema: schema.schema });
      await journal.migrate();
      ({ server, url } = await serveLedger(ledger));
    });
    afterAll(async () => {
      await v2?.stop();
      server?.closeAllConnections();
      server?.close();
      await journal?.close();
      await schema?.drop();
    });

    it("every old order completes under release 2 with exactly one charge; new orders take the new step", async () => {
      // ---- release 1, killed mid-flight ----
      ledger.hang.add(chargeKey("o3")); // charged, but the answer never comes: Unknown
      ledger.hang.add(mailKey("o4")); // mailed, no answer, no lookup for mails: reconciliation queue
      const v1 = await startWorker("v1-worker.ts", [PG_URL, schema.schema, url]);
      try {
        for (const id of ["o1", "o3", "o4"]) await v1.ask({ op: "place", id, email: email(id), amount: amount(id) });
        for (let round = 0; round < 4; round++) await v1.ask({ op: "dispatch" });
        await v1.ask({ op: "place", id: "o2", email: email("o2"), amount: amount("o2") });
        await v1.ask({ op: "dispatch" }); // o2 charged; its mail is requested, not sent
        await v1.ask({ op: "place", id: "o5", email: email("o5"), amount: amount("o5") }); // its charge stays Pending
        expect(await v1.ask({ op: "deliver-paid" })).toEqual(["parked", "parked", "parked"]);
      } finally {
        await v1.kill();
      }
      const status = async (key: string) => (await journal.getOutbox(key))?.status;
      expect(await status(chargeKey("o1"))).toBe("done");
      expect(await status(mailKey("o1"))).toBe("done");
      expect(await status(mailKey("o2"))).toBe("pending");
      expect(await status(chargeKey("o3"))).toBe("resolving");
      expect(await status(mailKey("o4"))).toBe("reconcile");
      expect(await status(chargeKey("o5"))).toBe("pending");
      expect(await journal.listParked("sales")).toHaveLength(3);
      const o1Stored = await journal.readStream("order/o1");

      // ---- release 2 takes over; the provider answers again ----
      ledger.hang.clear();
      v2 = await startRelease(2, journal, httpClient(url), "v2");
      await new Reconciliation({ journal }).settle(mailKey("o4"), {
        outcome: "succeeded",
        result: { id: "m_checked_by_ops" },
        by: "ops",
        note: "mail found in the provider's console",
      });
      for (const id of NEW) {
        await v2.runtime.send(`order/${id}`, {
          type: "PlaceOrder",
          email: email(id),
          amount: amount(id),
          channel: "app",
        });
      }
      const runtime = v2.runtime;
      const all = [...OLD, ...NEW];
      const done = async () => {
        for (const id of all) {
          if ((await runtime.state<OrderV2State>(`order/${id}`)).state.stage !== "done") return false;
        }
        const sales = await journal.listDocuments("sales");
        return sales.length === all.length && sales.every((d) => (d.doc as Sale).paid);
      };
      expect(await eventually(done, 30_000)).toBe(true);

      // Exactly one charge per order, each asked of the provider once, for the right amount.
      for (const id of all) {
        expect(ledger.requests.get(chargeKey(id)), `charge requests of ${id}`).toBe(1);
        expect(ledger.charges.get(chargeKey(id))).toMatchObject({ amountMinor: amount(id), email: email(id) });
        expect(ledger.mails.get(mailKey(id))?.to, `mail of ${id}`).toBe(email(id));
      }
      expect(ledger.charges.size).toBe(all.length);
      // No effect requested twice or lost: one row per key, every one done.
      const effects = await journal.listOutbox({ category: "effect" });
      expect(effects.filter((r) => r.status !== "done")).toEqual([]);
      expect(effects.map((r) => r.id).sort()).toEqual(
        [...all.flatMap((id) => [chargeKey(id), mailKey(id)]), ...NEW.map(riskKey)].sort(),
      );
      for (const id of all) {
        const types = (await journal.readStream(`order/${id}`)).map((e) => e.type);
        expect(
          types.filter((t) => t === "ChargeRequested"),
          id,
        ).toHaveLength(1);
        expect(types.includes("RiskCleared"), `${id} took the risk check`).toBe(NEW.includes(id));
      }
      expect([...ledger.riskChecks.keys()].sort()).toEqual(NEW.map(riskKey));
      // Old orders read in the new shapes; nothing stored was rewritten.
      expect((await runtime.state<OrderV2State>("order/o3")).state).toMatchObject({
        email: email("o3"),
        channel: "web",
      });
      expect(await journal.readStream("order/o1")).toEqual(o1Stored);
      // The integration events release 1 published (version 1 payloads) reached the new consumer.
      expect((await journal.getDocument("sales", "o2"))?.doc).toEqual({
        email: email("o2"),
        channel: "web",
        paid: true,
      });
      expect((await journal.getDocument("sales", "n1"))?.doc).toEqual({
        email: email("n1"),
        channel: "app",
        paid: true,
      });
      expect(await journal.listParked("sales")).toEqual([]);
      expect(await journal.listDeadLetters()).toEqual([]);
      expect(await v2.registry.getSingleMetricAsString("oncely_snapshot_migrated_total")).toMatch(
        /oncely_snapshot_migrated_total\{actor_type="order"\} [1-9]/,
      );
    });
  },
);
