import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DuplicateMessageError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  StorageUnavailableError,
  VersionConflictError,
} from "../../src/base/errors.js";
import { encodeCommit } from "../../src/journal/encode.js";
import type { Commit } from "../../src/journal/types.js";
import { commitJson } from "../../src/postgres/commit-batch.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { tables } from "../../src/postgres/tables.js";
import {
  finishOutboxRow,
  holdInboxKey as holdKey,
  terminateWaitingBatch,
  waitForWaitingBatch,
} from "../support/pg-batch-faults.js";
import { migratedPgSchema, PG_URL, probePostgres } from "../support/services.js";

/**
 * Group commit on PostgreSQL where only a real server can show it: many commits in one call of
 * the batch function, and the connection lost while a batch is in flight.
 */
const service = await probePostgres();
/** Commits submitted in one turn of the event loop leave together in the next. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe.skipIf(!service.available)(
  `postgres group commit${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    let schema = "";
    let drop: () => Promise<void> = async () => {};
    beforeAll(async () => {
      ({ schema, drop } = await migratedPgSchema("pg_group_commit"));
    });
    afterAll(async () => drop());

    const holdInboxKey = (consumer: string, messageId: string) => holdKey(`"${schema}"`, consumer, messageId);
    const blocker = (key: string): Commit => ({ inbox: { consumer: "lock", messageId: key, reply: null }, now: 1 });
    const order = (n: number): Commit => ({
      stream: `order/${n}`,
      expectedVersion: 0,
      events: [{ eventId: `placed-${n}-${Math.random()}`, type: "Placed", data: { n } }],
      outbox: [
        { id: `charge-${n}`, category: "effect", kind: "charge", stream: `order/${n}`, payload: { n }, notBefore: 1 },
      ],
      inbox: { consumer: `order/${n}`, messageId: `place-${n}`, reply: { ok: n } },
      now: 1,
    });

    it("loses every commit of a batch to a connection lost mid-batch; each retry with its own message id lands once", async () => {
      const name = `oncely-test-group-${process.pid}-${Date.now()}`;
      const pool = new pg.Pool({ connectionString: PG_URL, max: 2, application_name: name });
      const journal = postgresJournal({ connectionString: PG_URL, schema, pool });
      const releaseFirst = await holdInboxKey("lock", "first");
      const releaseSecond = await holdInboxKey("lock", "second");
      try {
        // Batch 1 waits on the first key; the orders leave as batch 2 (several batches may be in
        // flight), whose last commit waits on the second key, so batch 2 is in flight when its backend dies.
        const first = journal.commit(blocker("first"));
        await nextTurn(); // batch 1 leaves with the blocker alone
        const orders = [1, 2, 3, 4, 5].map((n) => journal.commit(order(n)));
        const second = journal.commit(blocker("second"));
        const settled = Promise.allSettled([...orders, second]);
        await releaseFirst();
        await first;
        await terminateWaitingBatch(name, "batch 2 to wait on the second key");
        const outcomes = await settled;
        for (const outcome of outcomes) {
          expect(outcome.status).toBe("rejected");
          expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StorageUnavailableError);
        }
        expect(journal.groupCommitStats.largest).toBe(6);
        await releaseSecond();
        // The batch was rolled back with its connection: nothing of it landed.
        for (const n of [1, 2, 3, 4, 5]) expect(await journal.streamVersion(`order/${n}`)).toBe(0);
        // Each caller retries with its own message id, exactly as after any ambiguous commit.
        const retried = await Promise.all([1, 2, 3, 4, 5].map((n) => journal.commit(order(n))));
        expect(retried.map((r) => r.version)).toEqual([1, 1, 1, 1, 1]);
        // A retry of a commit that landed (here: at the version it reached) is answered by the inbox.
        const again = await Promise.allSettled(
          [1, 2, 3, 4, 5].map((n) => journal.commit({ ...order(n), expectedVersion: 1 })),
        );
        for (const outcome of again) {
          expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateMessageError);
        }
        for (const n of [1, 2, 3, 4, 5]) {
          expect(await journal.streamVersion(`order/${n}`)).toBe(1);
          expect(await journal.getOutbox(`charge-${n}`)).toMatchObject({ status: "pending" });
        }
      } finally {
        await releaseSecond().catch(() => {});
        await journal.close();
        await pool.end();
      }
    });

    for (const path of ["per-commit", "set"] as const) {
      it(`answers a duplicate, writing nothing, for an outcome whose row another transaction finishes meanwhile (${path} path)`, async () => {
        const name = `oncely-test-outcome-${path}-${process.pid}-${Date.now()}`;
        const pool = new pg.Pool({ connectionString: PG_URL, max: 2, application_name: name });
        const journal = postgresJournal({ connectionString: PG_URL, schema, pool });
        const id = `raced-${path}`;
        const stream = `order/${id}`;
        await journal.commit({
          outbox: [{ id, category: "effect", kind: "charge", stream, payload: {}, notBefore: 1 }],
          now: 1,
        });
        // Another process's outcome for the same row, not yet committed: this commit's read of the
        // row must wait for it (per-commit path), or its done update must find the row finished
        // and leave the commit to the per-commit path (set path, whose guards read "not done").
        const other = await finishOutboxRow(`"${schema}"`, id);
        try {
          const settled = Promise.allSettled([
            journal.commit({
              stream,
              events: [{ eventId: `${id}-${Math.random()}`, type: "Charged", data: {} }],
              outboxDone: [{ id, outcome: "completed", result: { by: "batch" } }],
              inbox: { consumer: stream, messageId: `${id}#outcome`, reply: null, outcomeOf: id },
              now: 2,
            }),
            ...(path === "set" ? [journal.commit(order(700))] : []),
          ]);
          await waitForWaitingBatch(name, "the batch to wait on the row");
          await other.commit();
          const [outcome, placed] = await settled;
          expect(outcome?.status === "rejected" && outcome.reason).toBeInstanceOf(DuplicateMessageError);
          if (path === "set") {
            expect(placed?.status).toBe("fulfilled");
            expect(await journal.streamVersion("order/700")).toBe(1);
          }
          expect(journal.groupCommitStats.largest).toBe(path === "set" ? 2 : 1);
          expect(await journal.streamVersion(stream)).toBe(0);
          expect(await journal.getOutbox(id)).toMatchObject({ status: "done", result: {} });
          expect(await journal.getInbox(stream, `${id}#outcome`)).toBeUndefined();
        } finally {
          await other.rollback().catch(() => {});
          await journal.close();
          await pool.end();
        }
      });
    }

    it("applies a batch of many commits in one statement, each with its own result", async () => {
      // One batch of everything queued: the burst is not spread (the next test covers spreading).
      const journal = postgresJournal({ connectionString: PG_URL, schema, groupCommit: { spreadOver: 1 } });
      try {
        const release = await holdInboxKey("lock", "third");
        const first = journal.commit(blocker("third"));
        await nextTurn();
        const many = Array.from({ length: 40 }, (_, i) => journal.commit(order(100 + i)));
        const dup = journal.commit({
          ...order(200),
          inbox: { consumer: "order/100", messageId: "place-100", reply: 0 },
        });
        // Caught at once: its batch need not wait for the blocker's, so it may fail while this test
        // still awaits the release, and a rejection nobody holds yet is reported as unhandled.
        const dupRefused = expect(dup).rejects.toBeInstanceOf(DuplicateMessageError);
        await release();
        await first;
        const results = await Promise.all(many);
        expect(results.every((r) => r.version === 1 && r.inserted?.length === 1)).toBe(true);
        await dupRefused;
        expect(journal.groupCommitStats.largest).toBe(41);
        expect(journal.groupCommitStats.batches).toBe(2);
      } finally {
        await journal.close();
      }
    });

    it("spreads a burst of 50 commits over two batches in flight by default, each commit with its own result", async () => {
      const journal = postgresJournal({ connectionString: PG_URL, schema });
      try {
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) => journal.commit(order(600 + i))));
        expect(results.every((r) => r.version === 1 && r.inserted?.length === 1)).toBe(true);
        expect(journal.groupCommitStats).toMatchObject({ batches: 2, commits: 50, largest: 25 });
        const streams = await Promise.all(results.map((_, i) => journal.readStream(`order/${600 + i}`)));
        expect(streams.every((events) => events.length === 1)).toBe(true);
      } finally {
        await journal.close();
      }
    });

    it("writes the snapshots of a set-path batch, and answers the commits it leaves to the per-commit path", async () => {
      const journal = postgresJournal({ connectionString: PG_URL, schema, groupCommit: { spreadOver: 1 } });
      try {
        const snapshotOf = (n: number) => ({ version: 1, schemaVersion: 1, state: { n } });
        // One turn: one batch. Two commits with snapshots and one without go through the set
        // path; the second commit to stream 802 shares its stream with the first, so the set
        // path leaves it to the per-commit path, which runs it after, at version 1.
        const batch = [
          journal.commit({ ...order(800), snapshot: snapshotOf(800) }),
          journal.commit(order(801)),
          journal.commit({ ...order(802), snapshot: snapshotOf(802) }),
          journal.commit({
            stream: "order/802",
            expectedVersion: 1,
            events: [{ eventId: `paid-802-${Math.random()}`, type: "Paid", data: {} }],
            snapshot: { version: 2, schemaVersion: 1, state: { n: 802, paid: true } },
            now: 2,
          }),
        ];
        const results = await Promise.all(batch);
        expect(results.map((r) => r.version)).toEqual([1, 1, 1, 2]);
        expect(journal.groupCommitStats).toMatchObject({ batches: 1, commits: 4 });
        expect((await journal.latestSnapshot("order/800"))?.state).toEqual({ n: 800 });
        expect(await journal.latestSnapshot("order/801")).toBeUndefined();
        expect(await journal.latestSnapshot("order/802")).toMatchObject({ version: 2, state: { n: 802, paid: true } });
        // A batch where no commit has a snapshot writes none, and every commit is answered by the set path.
        const plain = await Promise.all([journal.commit(order(803)), journal.commit(order(804))]);
        expect(plain.map((r) => r.version)).toEqual([1, 1]);
        expect(await journal.latestSnapshot("order/803")).toBeUndefined();
      } finally {
        await journal.close();
      }
    });

    it("refuses alone a commit reusing an effect key held before its batch; the batch's other commits land", async () => {
      const journal = postgresJournal({ connectionString: PG_URL, schema, groupCommit: { spreadOver: 1 } });
      try {
        await journal.commit(order(810));
        // One batch, no key shared within it: every commit is the set path's, the reuse included.
        const batch = [
          journal.commit(order(811)),
          journal.commit({
            ...order(812),
            outbox: [
              { id: "charge-810", category: "effect", kind: "charge", stream: "order/812", payload: {}, notBefore: 1 },
            ],
          }),
          // The same key asked for again with the same request is no reuse: nothing to insert, no error.
          journal.commit({
            ...order(813),
            outbox: [
              {
                id: "charge-810",
                category: "effect",
                kind: "charge",
                stream: "order/810",
                payload: { n: 810 },
                notBefore: 1,
              },
            ],
          }),
          journal.commit(order(814)),
        ];
        const outcomes = await Promise.allSettled(batch);
        expect(journal.groupCommitStats).toMatchObject({ batches: 2, largest: 4 });
        expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
        const reused = (outcomes[1] as PromiseRejectedResult).reason;
        expect(reused).toBeInstanceOf(IdempotencyKeyReusedError);
        expect(String(reused.message)).toContain("charge-810");
        expect(await journal.streamVersion("order/812")).toBe(0);
        expect((outcomes[2] as PromiseFulfilledResult<{ inserted?: unknown[] }>).value.inserted).toEqual([]);
        for (const n of [811, 813, 814]) expect(await journal.streamVersion(`order/${n}`)).toBe(1);
        expect((await journal.getOutbox("charge-810"))?.stream).toBe("order/810");
      } finally {
        await journal.close();
      }
    });

    it("gives each commit of one batch its own fate: conflicts, duplicates and reused keys fail alone, the others land", async () => {
      const journal = postgresJournal({ connectionString: PG_URL, schema });
      try {
        await journal.commit(order(301));
        await journal.commit({ ...order(302), inbox: { consumer: "mail", messageId: "m-1", reply: 1 } });
        // One turn of the event loop: every commit below leaves in one batch.
        const batch = [
          journal.commit(order(300)),
          journal.commit({ ...order(301), inbox: { consumer: "order/301", messageId: "again", reply: 0 } }),
          journal.commit({ ...order(303), inbox: { consumer: "mail", messageId: "m-1", reply: 2 } }),
          journal.commit({
            ...order(304),
            outbox: [
              { id: "charge-300", category: "effect", kind: "charge", stream: "order/304", payload: {}, notBefore: 1 },
            ],
          }),
          journal.commit(order(305)),
          // The same stream twice: the second is applied after the first, at the version it left.
          journal.commit({
            ...order(305),
            expectedVersion: 1,
            inbox: { consumer: "order/305", messageId: "next", reply: 0 },
          }),
          journal.commit(order(306)),
        ];
        const outcomes = await Promise.allSettled(batch);
        const reason = (i: number) => (outcomes[i] as PromiseRejectedResult).reason;
        expect(journal.groupCommitStats.largest).toBe(7);
        expect(outcomes.map((o) => o.status)).toEqual([
          "fulfilled",
          "rejected",
          "rejected",
          "rejected",
          "fulfilled",
          "fulfilled",
          "fulfilled",
        ]);
        expect(reason(1)).toBeInstanceOf(VersionConflictError);
        expect(reason(1)).toMatchObject({ expectedVersion: 0, actualVersion: 1 });
        expect(reason(2)).toBeInstanceOf(DuplicateMessageError);
        expect(reason(3)).toBeInstanceOf(IdempotencyKeyReusedError);
        expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value.version : undefined))).toEqual([
          1,
          undefined,
          undefined,
          undefined,
          1,
          2,
          1,
        ]);
        expect((outcomes[0] as PromiseFulfilledResult<{ inserted?: unknown }>).value.inserted).toEqual([
          { id: "charge-300", seq: expect.any(Number) },
        ]);
        // A failed commit wrote nothing: no event, no inbox row, no outbox row.
        for (const n of [303, 304]) expect(await journal.streamVersion(`order/${n}`)).toBe(0);
        expect(await journal.streamVersion("order/301")).toBe(1);
        expect(await journal.getInbox("order/301", "again")).toBeUndefined();
        expect(await journal.getOutbox("charge-303")).toBeUndefined();
        expect(await journal.getOutbox("charge-304")).toBeUndefined();
        expect(await journal.getInbox("mail", "m-1")).toMatchObject({ reply: 1 });
        expect((await journal.readStream("order/305")).map((e) => e.version)).toEqual([1, 2]);
      } finally {
        await journal.close();
      }
    });

    it("answers a batch the set path refuses (an event id already used) one commit at a time, with the same fates", async () => {
      const journal = postgresJournal({ connectionString: PG_URL, schema });
      try {
        const used = { ...order(400), events: [{ eventId: "used-event", type: "Placed", data: {} }] };
        await journal.commit(used);
        const outcomes = await Promise.allSettled([
          journal.commit(order(401)),
          journal.commit({ ...order(402), events: [{ eventId: "used-event", type: "Placed", data: {} }] }),
          journal.commit(order(403)),
        ]);
        expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
        expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidInputError);
        expect(await journal.streamVersion("order/401")).toBe(1);
        expect(await journal.streamVersion("order/402")).toBe(0);
        expect(await journal.getOutbox("charge-402")).toBeUndefined();
        expect(await journal.streamVersion("order/403")).toBe(1);
      } finally {
        await journal.close();
      }
    });

    it("fails alone a commit of a batch whose JSON the server cannot hold as jsonb (a NUL byte); the others land", async () => {
      // The client refuses such text before it leaves (storable-text.ts), so the batch is sent by
      // hand: this is the server's own defence, the batch split as json when jsonb refuses it.
      const t = tables(schema);
      const [a, b, c] = [521, 522, 523];
      const texts = [a, b, c].map((n) => commitJson(encodeCommit(order(n)), true));
      texts[1] = (texts[1] as string).replace(`{"n":${b}}`, '{"n":"x\\u0000"}');
      expect(texts[1]).toContain("\\u0000");
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        const batch = `[${texts.join(",")}]`;
        const { rows } = await client.query(`SELECT ${t.commitPackedFunction}($1::text, $2::integer[], $3) AS r`, [
          batch,
          [],
          t.channel,
        ]);
        const answers = (JSON.parse(rows[0].r as string) as { results: Record<string, unknown>[] }).results;
        expect(answers).toHaveLength(3);
        expect(answers[0]).toMatchObject({ version: 1 });
        expect(answers[1]).toMatchObject({ code: "22P05" });
        expect(answers[2]).toMatchObject({ version: 1 });
      } finally {
        await client.end();
      }
      const journal = postgresJournal({ connectionString: PG_URL, schema });
      try {
        expect(await journal.streamVersion(`order/${a}`)).toBe(1);
        expect(await journal.streamVersion(`order/${b}`)).toBe(0);
        expect(await journal.getInbox(`order/${b}`, `place-${b}`)).toBeUndefined();
        expect(await journal.getOutbox(`charge-${b}`)).toBeUndefined();
        expect(await journal.streamVersion(`order/${c}`)).toBe(1);
      } finally {
        await journal.close();
      }
    });
  },
);
