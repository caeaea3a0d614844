import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TerminalStorageError } from "../../src/base/errors.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { withCountingJournal } from "../support/pg-statements.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

/**
 * Point reads on PostgreSQL that arrive together go as one statement: the consumer-state kinds (inbox
 * rows, checkpoints, documents, a parked version) all in one (`readState`'s), the others (parked
 * messages of a source, snapshots, stream versions, outbox rows by id: forwarders waiting on their
 * rows) one per kind; each answers what it alone would, and a key the server refuses fails its own
 * read only.
 */
const service = await probePostgres();
const UNNEST = /unnest\(\$1::text\[\]/;

describe.skipIf(!service.available)(
  `postgres point reads${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    let schema = "";
    let drop: () => Promise<void> = async () => {};
    beforeAll(async () => {
      ({ schema, drop } = await freshPgSchema("pg_point_reads"));
      const journal = postgresJournal({ connectionString: PG_URL, schema });
      await journal.migrate();
      await journal.commit({
        stream: "order/1",
        expectedVersion: 0,
        events: [
          { eventId: "e1", type: "Placed", data: {} },
          { eventId: "e2", type: "Paid", data: {} },
        ],
        snapshot: { version: 2, state: { paid: true }, schemaVersion: 1 },
        inbox: { consumer: "c", messageId: "m1", reply: { ok: 1 } },
        checkpoint: { consumer: "c", source: "orders/1", version: 3, expected: 0 },
        documents: [{ collection: "views", id: "v1", doc: { n: 1 } }],
        outbox: [
          { id: "o1", category: "message", kind: "order", stream: "order/1", payload: { to: "order/1" }, notBefore: 7 },
        ],
        park: [
          { consumer: "c", source: "orders/1", version: 6, message: { v: 6 } },
          { consumer: "c", source: "orders/1", version: 5, message: { v: 5 } },
        ],
        now: 7,
      });
      await journal.close();
    });
    afterAll(async () => drop());

    it("answers a burst of reads of every kind with one statement for consumer state and one per other kind, each as it alone would", async () => {
      await withCountingJournal(schema, `oncely-test-point-reads-${process.pid}`, async (journal, { matching }) => {
        const [
          inbox,
          missingInbox,
          checkpoint,
          noCheckpoint,
          doc,
          noDoc,
          parked,
          noParked,
          snap,
          noSnap,
          v,
          noV,
          row,
          noRow,
          parkedAt,
          noParkedAt,
        ] = await Promise.all([
          journal.getInbox("c", "m1"),
          journal.getInbox("c", "m2"),
          journal.getCheckpoint("c", "orders/1"),
          journal.getCheckpoint("c", "orders/2"),
          journal.getDocument("views", "v1"),
          journal.getDocument("views", "v2"),
          journal.listParked("c", "orders/1"),
          journal.listParked("c", "orders/2"),
          journal.latestSnapshot("order/1"),
          journal.latestSnapshot("order/2"),
          journal.streamVersion("order/1"),
          journal.streamVersion("order/2"),
          journal.getOutbox("o1"),
          journal.getOutbox("o2"),
          journal.getParked("c", "orders/1", 5),
          journal.getParked("c", "orders/1", 7),
        ]);
        // Eight kinds, two reads each: five statements (inbox, checkpoints, documents and parked versions
        // together; parked lists, snapshots, versions, outbox rows), not sixteen.
        expect(matching(UNNEST)).toBe(5);
        expect(inbox).toEqual({ consumer: "c", messageId: "m1", reply: { ok: 1 }, recordedAt: 7 });
        expect(missingInbox).toBeUndefined();
        expect([checkpoint, noCheckpoint]).toEqual([3, 0]);
        expect(doc).toMatchObject({ collection: "views", id: "v1", doc: { n: 1 } });
        expect(noDoc).toBeUndefined();
        expect(parked.map((p) => p.version)).toEqual([5, 6]);
        expect(noParked).toEqual([]);
        expect(snap).toMatchObject({ stream: "order/1", version: 2, state: { paid: true } });
        expect(noSnap).toBeUndefined();
        expect([v, noV]).toEqual([2, 0]);
        expect(row).toMatchObject({
          id: "o1",
          category: "message",
          stream: "order/1",
          status: "pending",
          payload: { to: "order/1" },
        });
        expect(noRow).toBeUndefined();
        expect(parkedAt).toMatchObject({ consumer: "c", source: "orders/1", version: 5, message: { v: 5 } });
        expect(noParkedAt).toBeUndefined();
      });
    });

    it("a key the server refuses fails its own read; the others of its burst are answered", async () => {
      await withCountingJournal(schema, `oncely-test-point-reads-refused-${process.pid}`, async (journal) => {
        const settled = await Promise.allSettled([
          journal.getInbox("c", "m1"),
          journal.getInbox("c", "bad\u0000id"),
          journal.getInbox("c", "m2"),
        ]);
        expect(settled[0]).toMatchObject({ status: "fulfilled", value: { messageId: "m1" } });
        expect(settled[1]?.status === "rejected" && settled[1].reason).toBeInstanceOf(TerminalStorageError);
        expect(settled[2]).toEqual({ status: "fulfilled", value: undefined });
      });
    });
  },
);
