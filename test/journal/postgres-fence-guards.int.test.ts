import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fenceCheckpoint } from "../../src/core/slices.js";
import { encodeCommit, writeKeys } from "../../src/journal/encode.js";
import type { Commit } from "../../src/journal/types.js";
import { commitJson } from "../../src/postgres/commit-batch.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { tables } from "../../src/postgres/tables.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

const service = await probePostgres();

const SLICE = 3;
const TOKEN = 5;

const guarded = (stream: string, token: number, n: number): Commit => ({
  stream,
  expectedVersion: 0,
  events: [{ eventId: `${stream}-e${n}`, type: "Happened", data: { n } }],
  checkpoints: [fenceCheckpoint(SLICE, token)],
  now: 10,
});

describe("a slice's fence in the write keys", () => {
  it("a guard gives no key (guarded commits share batches); a checkpoint that moves gives one", () => {
    const guard = writeKeys(encodeCommit(guarded("order/a", TOKEN, 1)));
    expect(guard).toEqual(["s\0order/a"]);
    const move = writeKeys(
      encodeCommit({
        checkpoints: [{ consumer: "oncely/slice-fence", source: String(SLICE), version: 6, expected: 5 }],
        now: 1,
      }),
    );
    expect(move).toEqual([`c\0oncely/slice-fence\0${SLICE}`]);
  });
});

describe.skipIf(!service.available)(
  `fenced commits on PostgreSQL's set path${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    let schema: string;
    let drop: () => Promise<void>;
    let journal: ReturnType<typeof postgresJournal>;
    let a: pg.Client;
    let b: pg.Client;
    let packed: string;

    beforeAll(async () => {
      ({ schema, drop } = await freshPgSchema("fence_guards"));
      journal = postgresJournal({ connectionString: PG_URL, schema });
      await journal.migrate();
      // The slice is held under TOKEN (as an acquire leaves it).
      await journal.commit({
        checkpoints: [{ consumer: "oncely/slice-fence", source: String(SLICE), version: TOKEN, expected: 0 }],
        now: 1,
      });
      a = new pg.Client({ connectionString: PG_URL });
      b = new pg.Client({ connectionString: PG_URL });
      await a.connect();
      await b.connect();
      packed = `${tables(schema).qschema}.oncely_commit_packed`;
    });

    afterAll(async () => {
      await a?.end();
      await b?.end();
      await journal?.close();
      await drop?.();
    });

    const batch = (commits: Commit[]) => `[${commits.map((c) => commitJson(encodeCommit(c), true)).join(",")}]`;
    const call = async (client: pg.Client, commits: Commit[]) => {
      const { rows } = await client.query(`SELECT ${packed}($1::text, '{}'::integer[], 'oncely_test') AS r`, [
        batch(commits),
      ]);
      return (JSON.parse(rows[0].r as string) as { results: Record<string, unknown>[] }).results;
    };

    it("applies commits guarded by a fence that holds set-wise, and leaves a stale one to be refused alone", async () => {
      const results = await call(a, [
        guarded("order/g1", TOKEN, 1),
        guarded("order/g2", TOKEN, 1),
        guarded("order/stale", TOKEN - 1, 1),
      ]);
      // The set path answers a commit it applied with its stream's version before it ({"base"}).
      expect(results[0]).toEqual({ base: 0 });
      expect(results[1]).toEqual({ base: 0 });
      // The per-commit path refuses the stale owner's commit, naming the fence's token.
      expect(results[2]).toMatchObject({ checkpoint: TOKEN, at: 0 });
      expect(await journal.readStream("order/g1")).toHaveLength(1);
      expect(await journal.readStream("order/stale")).toHaveLength(0);
    });

    it("a takeover of the slice waits for a batch guarded by its fence, as the per-commit path's update made it", async () => {
      await a.query("BEGIN");
      await call(a, [guarded("order/w1", TOKEN, 1), guarded("order/w2", TOKEN, 1)]);
      const takeover = b.query(
        `UPDATE ${tables(schema).qschema}.checkpoints SET version = $1 WHERE consumer = 'oncely/slice-fence' AND source = $2 AND version = $3`,
        [TOKEN + 1, String(SLICE), TOKEN],
      );
      // The takeover blocks on the guard's row lock while the batch's transaction is open.
      await expect.poll(waitingUpdates, { timeout: 10_000 }).toBe(1);
      await a.query("COMMIT");
      expect((await takeover).rowCount).toBe(1);
      // After the takeover, the old token's guard no longer holds.
      const results = await call(a, [guarded("order/late1", TOKEN, 1), guarded("order/late2", TOKEN, 1)]);
      expect(results).toEqual([
        expect.objectContaining({ checkpoint: TOKEN + 1, at: 0 }),
        expect.objectContaining({ checkpoint: TOKEN + 1, at: 0 }),
      ]);
    });

    it("two batches in flight guarding one fence share its lock, on the set path and the per-commit path alike", async () => {
      // A lease renewal: the fence as a guard beside a document, which only the per-commit path writes.
      const renewal = (n: number): Commit => ({
        checkpoints: [fenceCheckpoint(SLICE, TOKEN + 1)],
        documents: [{ collection: "renewals", id: String(SLICE), doc: { n } }],
        now: 20,
      });
      // The other batch would wait for a lock held by the first one: make that wait an error, not a stall.
      await b.query("SET lock_timeout = '2s'");
      try {
        await a.query("BEGIN");
        expect(await call(a, [renewal(1)])).toEqual([expect.objectContaining({ version: 0 })]);
        // While the renewal's transaction is open, a batch of guarded commits takes the same fence FOR SHARE.
        expect(await call(b, [guarded("order/s1", TOKEN + 1, 1), guarded("order/s2", TOKEN + 1, 1)])).toEqual([
          { base: 0 },
          { base: 0 },
        ]);
        await a.query("COMMIT");

        // The other way round: a guarded batch holds the fence FOR SHARE, a renewal guards it per commit.
        await a.query("BEGIN");
        expect(await call(a, [guarded("order/s3", TOKEN + 1, 1), guarded("order/s4", TOKEN + 1, 1)])).toEqual([
          { base: 0 },
          { base: 0 },
        ]);
        expect(await call(b, [renewal(2)])).toEqual([expect.objectContaining({ version: 0 })]);
        await a.query("COMMIT");
        expect((await journal.getDocument("renewals", String(SLICE)))?.doc).toEqual({ n: 2 });
        expect(await journal.getCheckpoint("oncely/slice-fence", String(SLICE))).toBe(TOKEN + 1);
      } finally {
        await a.query("ROLLBACK").catch(() => {});
        await b.query("RESET lock_timeout");
      }
    });

    async function waitingUpdates(): Promise<number> {
      const probe = new pg.Client({ connectionString: PG_URL });
      await probe.connect();
      try {
        const { rows } = await probe.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE%slice-fence%'",
        );
        return rows[0].n as number;
      } finally {
        await probe.end();
      }
    }
  },
);
