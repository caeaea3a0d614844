import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/base/errors.js";
import type { NewEvent } from "../../src/journal/types.js";
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

    it("wakes its own listeners once per commit, by category; another instance's NOTIFY wakes every listener", async () => {
      const a = open();
      const b = open();
      await a.migrate();
      await a.listening();
      const row = (id: string, category: "event" | "effect") =>
        ({ id, category, kind: "k", stream: "s/1", payload: null, notBefore: 0 }) as const;
      const settle = () => new Promise((r) => setTimeout(r, 300));
      let served = 0;
      let all = 0;
      const offServed = a.onOutbox(() => served++, ["effect", "message"]);
      const offAll = a.onOutbox(() => all++);
      try {
        // This journal's commit wakes its listeners when it returns; its NOTIFY, from one of its own
        // connections, comes back on the LISTEN connection and is skipped.
        await a.commit({ outbox: [row("own-event", "event")], now: 1 });
        await settle();
        expect(served).toBe(0);
        expect(all).toBe(1);
        await a.commit({ outbox: [row("own-effect", "effect")], now: 2 });
        await settle();
        expect(served).toBe(1);
        expect(all).toBe(2);
        // Another instance's NOTIFY does not say what it added: every listener looks.
        await b.commit({ outbox: [row("their-event", "event")], now: 3 });
        await waitFor(async () => served === 2 && all === 3, "the other instance's NOTIFY to wake both listeners");
      } finally {
        offServed();
        offAll();
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
