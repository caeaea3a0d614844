import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/base/errors.js";
import { encodeCommit } from "../../src/journal/encode.js";
import { outboxSlice } from "../../src/journal/outbox-slice.js";
import type { NewEvent } from "../../src/journal/types.js";
import { commitJson } from "../../src/postgres/commit-batch.js";
import { postgresJournal } from "../../src/postgres/index.js";
import type { PostgresJournal } from "../../src/postgres/journal.js";
import { migrations } from "../../src/postgres/migrations.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { waitFor } from "../support/wait.js";

/** PostgreSQL-only behaviour: concurrent migrations, LISTEN/NOTIFY across instances, dropped connections. */
const service = await probePostgres();

const wake = (journal: PostgresJournal, what: string, timeoutMs = 3_000): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no outbox wake-up: ${what}`));
    }, timeoutMs);
    const off = journal.onOutbox(() => {
      clearTimeout(timer);
      off();
      resolve();
    });
  });

describe.skipIf(!service.available)(
  `postgres journal connections${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    let schema = "";
    let drop: () => Promise<void> = async () => {};
    const admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
    admin.on("error", () => {});
    const opened: PostgresJournal[] = [];
    const open = (options: Partial<Parameters<typeof postgresJournal>[0]> = {}) => {
      const journal = postgresJournal({ connectionString: PG_URL, schema, max: 4, ...options });
      opened.push(journal);
      return journal;
    };

    beforeAll(async () => {
      ({ schema, drop } = await freshPgSchema("pg_connections"));
    });
    // Each test closes what it opened, so only its own LISTEN connection is on the channel.
    afterEach(async () => {
      for (const j of opened.splice(0)) await j.close();
    });
    afterAll(async () => {
      await admin.end();
      await drop();
    });

    it("applies each migration once when several pools migrate at the same moment", async () => {
      const journals = [open(), open(), open(), open()];
      await Promise.all(journals.map((j) => j.migrate()));
      const applied = await admin.query(`SELECT version FROM "${schema}".oncely_schema_migrations ORDER BY version`);
      expect(applied.rows).toEqual(migrations.map((m) => ({ version: m.version })));
      await Promise.all(journals.map((j) => j.migrate()));
      expect((await admin.query(`SELECT count(*)::int AS n FROM "${schema}".oncely_schema_migrations`)).rows[0].n).toBe(
        migrations.length,
      );
    });

    it("wakes another instance through NOTIFY on commits, updates back to pending and forced changes", async () => {
      const a = open();
      const b = open();
      await a.listening();
      let woke = wake(a, "commit");
      await b.commit({
        outbox: [{ id: "n1", category: "effect", kind: "k", stream: "s/1", payload: null, notBefore: 0 }],
        now: 1,
      });
      await woke;
      await b.claimOutbox({ owner: "d", now: 1, leaseMs: 1_000, limit: 1 });
      woke = wake(a, "update");
      expect(await b.updateOutbox("n1", "d", { attempts: 1, notBefore: 50 }, 2)).toBe(true);
      await woke;
      woke = wake(a, "force");
      expect(await b.forceOutbox("n1", { status: "reconcile" }, 3)).toBe(true);
      await woke;
      // A duplicate outbox id adds nothing, so nothing is announced.
      let extra = 0;
      const off = a.onOutbox(() => extra++);
      await b.commit({
        outbox: [{ id: "n1", category: "effect", kind: "k", stream: "s/1", payload: null, notBefore: 0 }],
        now: 4,
      });
      await new Promise((r) => setTimeout(r, 300));
      off();
      expect(extra).toBe(0);
    });

    it("wakes its own listeners once per commit, by category; another instance's NOTIFY wakes only the owners of what it added", async () => {
      const a = open();
      const b = open();
      await a.migrate();
      await a.listening();
      const row = (id: string, category: "event" | "effect", stream = "s/1") =>
        ({ id, category, kind: "k", stream, payload: null, notBefore: 0 }) as const;
      const settle = () => new Promise((r) => setTimeout(r, 300));
      // Two streams of two different slices: a listener owning one slice hears only that one's rows.
      const mine = outboxSlice(row("x", "effect"), a.sliceCount);
      let other = 2;
      while (outboxSlice(row("x", "effect", `s/${other}`), a.sliceCount) === mine) other++;
      let served = 0;
      let all = 0;
      let owner = 0;
      let notOwner = 0;
      const offs = [
        a.onOutbox(() => served++, ["effect", "message"]),
        a.onOutbox(() => all++),
        a.onOutbox(
          () => owner++,
          ["effect"],
          (slice) => slice === mine,
        ),
        a.onOutbox(
          () => notOwner++,
          ["effect"],
          (slice) => slice !== mine,
        ),
      ];
      try {
        // This journal's commit wakes its listeners when it returns; its NOTIFY, from one of its own
        // connections, comes back on the LISTEN connection and is skipped.
        await a.commit({ outbox: [row("own-event", "event")], now: 1 });
        await settle();
        expect([served, all, owner, notOwner]).toEqual([0, 1, 0, 0]);
        await a.commit({ outbox: [row("own-effect", "effect")], now: 2 });
        await settle();
        expect([served, all, owner, notOwner]).toEqual([1, 2, 1, 0]);
        // Another instance's NOTIFY says what it added: an event wakes no dispatcher.
        await b.commit({ outbox: [row("their-event", "event")], now: 3 });
        await waitFor(async () => all === 3, "the other instance's NOTIFY to wake the listener of everything");
        await settle();
        expect([served, all, owner, notOwner]).toEqual([1, 3, 1, 0]);
        // An effect of the other slice wakes that slice's owner only (and those owning every slice).
        await b.commit({ outbox: [row("their-effect", "effect", `s/${other}`)], now: 4 });
        await waitFor(async () => all === 4, "the NOTIFY of an effect row");
        await settle();
        expect([served, all, owner, notOwner]).toEqual([2, 4, 1, 1]);
        // Two commits of one batch, one row in each slice: both owners.
        await Promise.all([
          b.commit({ outbox: [row("batch-1", "effect")], now: 5 }),
          b.commit({ outbox: [row("batch-2", "effect", `s/${other}`)], now: 5 }),
        ]);
        await waitFor(async () => owner === 2 && notOwner === 2, "both owners woken by the batch");
        // A durable timer (due later) is for the poll: its NOTIFY wakes nobody.
        await b.commit({ outbox: [{ ...row("timer", "effect"), notBefore: 10_000 }], now: 6 });
        await settle();
        expect([owner, notOwner]).toEqual([2, 2]);
        // A NOTIFY that names nothing (a client of the previous release) or is unreadable wakes everyone.
        for (const payload of ["", "effect/not-a-slice"]) {
          const before = [served, all, owner, notOwner];
          await admin.query("SELECT pg_notify($1, $2)", [a.tables.channel, payload]);
          await waitFor(
            async () => [served, all, owner, notOwner].every((n, i) => n === (before[i] as number) + 1),
            `every listener woken by the payload "${payload}"`,
          );
        }
      } finally {
        for (const off of offs) off();
      }
    });

    it("takes a commit of the previous release's client (no wake payload) and wakes every listener", async () => {
      const a = open();
      await a.migrate();
      await a.listening();
      let woke = 0;
      const off = a.onOutbox(
        () => woke++,
        ["effect"],
        () => false,
      );
      try {
        // The text the previous release sent for a lone commit, called with the two arguments it passed.
        const commit = commitJson(
          encodeCommit(
            {
              outbox: [{ id: "old-row", category: "effect", kind: "k", stream: "old/1", payload: null, notBefore: 0 }],
              now: 1,
            },
            a.sliceCount,
          ),
        );
        const { rows } = await admin.query(`SELECT ${a.tables.commitFunction}(ARRAY[$1::text], $2) AS r`, [
          commit,
          a.tables.channel,
        ]);
        expect(JSON.parse((rows[0].r as string[])[0] as string)).toMatchObject({
          inserted: [["old-row", expect.anything()]],
        });
        await waitFor(async () => woke === 1, "the old client's NOTIFY to wake a listener owning no slice");
        expect((await a.getOutbox("old-row"))?.status).toBe("pending");
      } finally {
        off();
      }
    });

    it("wakes its own log readers once per append; another instance's append wakes them through NOTIFY", async () => {
      const a = open();
      const b = open();
      await a.migrate();
      let woke = 0;
      const off = a.onPublished(() => woke++);
      try {
        await a.listening();
        await waitFor(async () => {
          const r = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1", [
            `LISTEN "${a.tables.publishedChannel}"`,
          ]);
          return r.rows[0].n > 0;
        }, "the published channel's LISTEN");
        const entry = (messageId: string) => ({ messageId, subject: "shop.orders.Placed", body: "{}" });
        await a.appendPublished(entry("own"), 1);
        await new Promise((r) => setTimeout(r, 300));
        // Woken when the append returned; its NOTIFY, from one of a's own connections, is skipped.
        expect(woke).toBe(1);
        await b.appendPublished(entry("theirs"), 2);
        await waitFor(async () => woke === 2, "the other instance's NOTIFY");
      } finally {
        off();
      }
    });

    it("re-establishes LISTEN after its connection is terminated", async () => {
      const a = open();
      const b = open();
      await a.listening();
      const listenPid = async () => {
        const r = await admin.query(
          "SELECT pid FROM pg_stat_activity WHERE application_name = 'oncely-listen' AND query = $1",
          [`LISTEN "${a.tables.channel}"`],
        );
        return r.rows.map((row: { pid: number }) => row.pid);
      };
      const pids = await listenPid();
      expect(pids).toHaveLength(1);
      const before = pids[0];
      const catchUp = wake(a, "reconnect");
      await admin.query("SELECT pg_terminate_backend($1)", [before]);
      // After reconnecting the listener wakes once: notifications sent while it was away are lost.
      await catchUp;
      await waitFor(async () => (await listenPid()).some((pid) => pid !== before), "a new LISTEN connection");
      const woke = wake(a, "commit after reconnect");
      await b.commit({
        outbox: [{ id: "after-reconnect", category: "event", kind: "k", stream: "s/1", payload: 1, notBefore: 0 }],
        now: 5,
      });
      await woke;
    });

    it("survives pooled connections being killed, and keeps working", async () => {
      const name = `oncely-test-${process.pid}-${Date.now()}`;
      const pool = new pg.Pool({ connectionString: PG_URL, max: 3, application_name: name });
      const journal = open({ pool });
      try {
        await Promise.all([journal.streamVersion("s/1"), journal.streamVersion("s/2"), journal.streamVersion("s/3")]);
        const killed = await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
          [name],
        );
        expect(killed.rowCount).toBeGreaterThan(0);
        await waitFor(async () => journal.lastPoolError !== undefined, "the pool to notice");
        // The process is still here (the pool's 'error' was handled) and new connections replace the dead ones.
        expect(await journal.streamVersion("s/1")).toBe(0);
      } finally {
        await journal.close();
        await pool.end();
      }
    });

    it("reports an unreachable server as StorageUnavailableError", async () => {
      const journal = postgresJournal({ connectionString: "postgres://postgres@127.0.0.1:1/test", schema });
      try {
        const error = await journal.migrate().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StorageUnavailableError);
        expect((error as StorageUnavailableError).retryable).toBe(true);
        expect((error as Error).cause).toBeDefined();
        await expect(journal.streamVersion("s/1")).rejects.toBeInstanceOf(StorageUnavailableError);
      } finally {
        await journal.close();
      }
    });

    it("turns a connection killed mid-commit into StorageUnavailableError, with nothing half-written", async () => {
      const name = `oncely-test-kill-${process.pid}-${Date.now()}`;
      const pool = new pg.Pool({ connectionString: PG_URL, max: 1, application_name: name });
      const journal = open({ pool });
      try {
        const events: NewEvent[] = Array.from({ length: 20_000 }, (_, i) => ({
          eventId: `kill-${i}`,
          type: "Big",
          data: { i, pad: "x".repeat(100) },
        }));
        // The batch may have landed and its NOTIFY, from this journal's own connection, is skipped:
        // a failed batch wakes every listener, even one for a category the commit does not hold.
        let woke = 0;
        const off = journal.onOutbox(() => woke++, ["effect"]);
        await journal.listening();
        // Caught at once: the rejection can come while waitFor is still polling, and a rejection
        // nobody has caught yet is reported by vitest as an unhandled error.
        const committing = journal
          .commit({ stream: "kill/1", expectedVersion: 0, events, now: 1 })
          .catch((e: unknown) => e);
        await waitFor(async () => {
          const r = await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle'",
            [name],
          );
          return (r.rowCount ?? 0) > 0;
        }, "the commit to be in flight");
        const error = await committing;
        expect(error).toBeInstanceOf(StorageUnavailableError);
        await waitFor(async () => woke > 0, "a wake-up after the failed batch");
        off();
        expect([0, 20_000]).toContain(await journal.streamVersion("kill/1"));
      } finally {
        await journal.close();
        await pool.end();
      }
    });
  },
);
