import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { encodeOutboxWrite, isOutboxWrite, type JournalWrite, writeKeys } from "../../src/journal/encode.js";
import type { EncodedCommit } from "../../src/journal/encoded-commit.js";
import { commitJson, outboxWriteJson } from "../../src/postgres/commit-batch.js";
import { migrations } from "../../src/postgres/migrations.js";
import { fileSql } from "../../src/postgres/schema-files.js";
import { type Tables, tables } from "../../src/postgres/tables.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

/**
 * Migration 0009_commit_parts split the commit functions into parts (oncely_commit_checkpoints,
 * oncely_commit_set_outbox...) and promised nothing else changes. Checked here as a differential: one
 * schema at migration 8, one at 9, the same seeded batches sent to both (lone commits to
 * oncely_commit, batches to oncely_commit_packed, commits that fail on every guard, malformed ones),
 * and the answers, the NOTIFYs and every table compared. The frozen files make this hold for good:
 * it compares versions 8 and 9, whatever later migrations do.
 */

const service = await probePostgres();

/** A small deterministic generator (mulberry32): the same seed, the same batches. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const chance = (p: number) => next() < p;
  const some = <T>(max: number, make: () => T): T[] => Array.from({ length: int(max + 1) }, make);
  return { int, pick, chance, some };
}

type Rng = ReturnType<typeof random>;

/** One commit over a small key space, so that conflicts, duplicates, reuses and refused checkpoints happen. */
function commitOf(r: Rng, now: number, versions: Map<string, number>, eventIds: string[]): EncodedCommit {
  const stream = r.chance(0.85) ? r.pick(["s0", "s1", "s2", "s3"]) : undefined;
  const current = stream === undefined ? 0 : (versions.get(stream) ?? 0);
  const consumer = r.pick(["c0", "c1"]);
  const eventId = () =>
    r.chance(0.05) && eventIds.length > 0 ? r.pick(eventIds) : `ev${eventIds.push(`ev${now}-${eventIds.length}`) - 1}`;
  const outcomeOf = r.chance(0.05) ? r.pick(["x0", "x1", "x2"]) : undefined;
  return {
    stream,
    expectedVersion: r.chance(0.4) ? undefined : current + (r.chance(0.8) ? 0 : r.pick([-1, 1])),
    now,
    events:
      stream === undefined
        ? []
        : r.some(2, () => ({
            eventId: eventId(),
            type: "T",
            data: JSON.stringify({ n: r.int(5) }),
            causationId: r.chance(0.3) ? "cause" : null,
            correlationId: null,
            schemaVersion: 1,
          })),
    snapshot:
      stream !== undefined && r.chance(0.2) ? { version: current, schemaVersion: 1, state: `{"v":${now}}` } : undefined,
    outbox: r.some(2, () => {
      const category = r.pick(["effect", "effect", "message", "event"] as const);
      const leased = r.chance(0.3);
      // Mostly the same request for a key asked for again (not a reuse), sometimes another one.
      const same = r.chance(0.8);
      return {
        id: r.chance(0.2)
          ? r.pick(["x0", "x1", "x2"])
          : `${category[0]}${r.chance(0.3) ? r.int(8) : `-${now}-${r.int(1000)}`}`,
        category,
        kind: same ? "charge" : r.pick(["charge", "mail"]),
        stream: same ? consumer : r.pick([consumer, stream ?? "s0"]),
        payload: JSON.stringify(same ? { k: 1, trace: `t${now}` } : r.pick([{ k: r.int(2) }, r.int(2)])),
        notBefore: now,
        leaseOwner: leased ? "w1" : null,
        leaseUntil: leased ? now + 100 : null,
        attempts: leased ? 1 : 0,
        result: "null",
        slice: r.int(4),
      };
    }),
    outboxDone: r
      .some(2, () => ({ id: r.pick(["x0", "x1", "x2", "e1", "m2"]), outcome: "ok", result: `{"r":${now}}` }))
      .concat(outcomeOf === undefined ? [] : [{ id: outcomeOf, outcome: "ok", result: "1" }]),
    inbox:
      r.chance(0.4) || outcomeOf !== undefined
        ? { consumer, messageId: r.chance(0.2) ? `m${r.int(6)}` : `m-${now}`, reply: `{"at":${now}}`, outcomeOf }
        : undefined,
    checkpoints: r.chance(0.25)
      ? [...new Set(r.some(2, () => r.pick(["a", "b", "c"])))].map((source) => {
          const version = r.int(4);
          return { consumer, source, version, expected: r.pick([undefined, 0, version, version - 1, r.int(3)]) };
        })
      : [],
    park: r.chance(0.15)
      ? r.some(2, () => ({ consumer, source: "a", version: r.int(3), message: `{"p":${now}}` }))
      : [],
    unpark: r.chance(0.1) ? r.some(2, () => ({ consumer, source: "a", version: r.int(3) })) : [],
    deadLetters: r.chance(0.1)
      ? r.some(1, () => ({
          id: `dl${r.int(3)}`,
          consumer,
          messageId: r.chance(0.5) ? `m${r.int(6)}` : null,
          payload: "{}",
          error: "boom",
          stack: null,
          attempts: 3,
          firstFailedAt: now,
          lastFailedAt: now,
        }))
      : [],
    documents: r.chance(0.3)
      ? r.some(3, () => ({ collection: "d", id: `${r.int(3)}`, doc: r.chance(0.3) ? null : `{"d":${now}}` }))
      : [],
    published: r.chance(0.15)
      ? r.some(2, () => ({ messageId: `p${r.int(6)}`, subject: "s", body: `{"b":${now}}`, slice: r.int(4) }))
      : [],
  };
}

function writeOf(r: Rng, now: number, versions: Map<string, number>, eventIds: string[]): JournalWrite {
  if (r.chance(0.15)) {
    const status = r.pick(["pending", "resolving", "done", "dead", undefined] as const);
    return encodeOutboxWrite(
      r.pick(["x0", "x1", "x2", "e1", "m3"]),
      r.pick([null, "w1", "w2"]),
      {
        ...(status ? { status } : {}),
        attempts: r.int(3),
        lastError: r.chance(0.5) ? "e" : null,
        releaseLease: r.chance(0.7),
      },
      now,
    );
  }
  return commitOf(r, now, versions, eventIds);
}

/** Commits the server must refuse or fail alone: each part malformed in turn, and text that is no JSON. */
const MALFORMED = [
  '{"stream":"s9","now":1,"events":[],"outbox":[],"done":[],"docs":{}}',
  '{"stream":"s9","now":1,"events":[],"outbox":[],"done":[],"docs":[],"park":5,"unpark":[],"dead":[]}',
  '{"stream":"s9","now":1,"events":[],"outbox":[],"done":[],"docs":[],"park":[],"unpark":{},"dead":[]}',
  '{"stream":"s9","now":1,"events":[],"outbox":[],"done":[],"docs":[],"park":[],"unpark":[],"dead":"x"}',
  '{"stream":"s9","now":1,"events":[],"outbox":[],"done":[],"checkpoints":{}}',
  '{"stream":"s9","now":1,"events":[],"outbox":{},"done":[]}',
  '{"stream":"s9","now":1,"events":[],"outbox":[{"id":"q","category":"effect"}],"done":[]}',
  '{"stream":"s9","now":1,"events":[],"outbox":[],"done":[],"published":{}}',
  '{"stream":"s9","now":1,"events":[],"outbox":[],"done":[],"docs":[{"collection":"d","id":"1","delete":"maybe"}]}',
  '{"stream":"s9","now":1,"events":[],"outbox":[],"done":[],"checkpoints":[{"consumer":"c0","source":"z","version":"x"}]}',
  '{"update":{"id":"x0","now":"soon"}}',
  '{"update":{"id":"x0","now":1,"force":"perhaps"}}',
  '{"stream":"s9","now":1,"events":[{"event_id":"nul","type":"T","data":"\\u0000"}],"outbox":[],"done":[]}',
  "not json",
];

interface Side {
  t: Tables;
  client: pg.Client;
  notified: string[];
}

describe.skipIf(!service.available)(
  `the commit functions in parts (0009) against whole (0008)${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    const drops: (() => Promise<void>)[] = [];
    const clients: pg.Client[] = [];
    afterAll(async () => {
      for (const c of clients) await c.end();
      for (const drop of drops) await drop();
    });

    /** A schema with migrations 1 to `version` applied from their files, and a client listening on its channels. */
    const side = async (version: number): Promise<Side> => {
      const { schema, drop } = await freshPgSchema(`parts_${version}`);
      drops.push(drop);
      const t = tables(schema);
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      clients.push(client);
      await client.query("BEGIN");
      for (const migration of migrations.filter((m) => m.version <= version)) {
        for (const file of migration.files) await client.query(fileSql(migration, file, t));
      }
      await client.query("COMMIT");
      const notified: string[] = [];
      // Named by role, so the two schemas' channels compare equal.
      client.on("notification", (n) => notified.push(n.channel === t.channel ? "outbox" : "published"));
      await client.query(`LISTEN "${t.channel}"; LISTEN "${t.publishedChannel}"`);
      return { t, client, notified };
    };

    /** One call; its answer and the NOTIFYs it sent (delivered at its COMMIT, before the answer). */
    const call = async (s: Side, sql: string, params: unknown[]) => {
      const { rows } = await s.client.query(sql.replaceAll("$schema", s.t.qschema), [...params, s.t.channel]);
      await new Promise((resolve) => setImmediate(resolve));
      return { answer: rows[0].r as unknown, notified: s.notified.splice(0).sort() };
    };

    const dump = async (s: Side) => {
      const out: Record<string, unknown> = {};
      for (const table of [
        "events",
        "snapshots",
        "inbox",
        "checkpoints",
        "outbox",
        "parked",
        "dead_letters",
        "documents",
        "published",
      ]) {
        const { rows } = await s.client.query(`SELECT to_jsonb(x) AS row FROM ${s.t.qschema}.${table} x ORDER BY 1`);
        out[table] = rows.map((row) => row.row);
      }
      return out;
    };

    it("answer, notify and write the same for the same seeded batches, refused and malformed commits included", async () => {
      const [before, after] = [await side(8), await side(9)];
      expect(migrations.map((m) => m.name)).toContain("0009_commit_parts");
      const r = random(20261206);
      const versions = new Map<string, number>();
      const eventIds: string[] = [];
      let now = 1;
      let calls = 0;
      for (let round = 0; round < 150; round++) {
        const { rows } = await before.client.query(
          `SELECT stream, max(version) AS v FROM ${before.t.qschema}.events GROUP BY stream`,
        );
        for (const row of rows) versions.set(row.stream as string, row.v as number);
        const writes = Array.from({ length: r.chance(0.3) ? 1 : 2 + r.int(7) }, () =>
          writeOf(r, now++, versions, eventIds),
        );
        const text = (w: JournalWrite, packed: boolean) =>
          isOutboxWrite(w) ? outboxWriteJson(w) : commitJson(w, packed);
        const texts = writes.map((w) => text(w, false));
        if (r.chance(0.1)) texts.splice(r.int(texts.length + 1), 0, r.pick(MALFORMED));
        // The per-commit path with every write, and group commit with the client's `later` (as commit-batch.ts).
        const seen = new Set<string>();
        const later: number[] = [];
        writes.forEach((w, i) => {
          const keys = writeKeys(w);
          if ((!isOutboxWrite(w) && w.published.length > 0) || keys.some((k) => seen.has(k))) later.push(i + 1);
          for (const k of keys) seen.add(k);
        });
        const items = writes.map((w) => text(w, true));
        if (r.chance(0.1)) items.splice(r.int(items.length + 1), 0, r.pick(MALFORMED.slice(0, -1)));
        const packed = `[${items.join(",")}]`;
        const [sql, params] =
          round % 2 === 0
            ? ["SELECT $schema.oncely_commit($1::text[], $2) AS r", [texts]]
            : ["SELECT $schema.oncely_commit_packed($1::text, $2::integer[], $3) AS r", [packed, later]];
        const a = await call(before, sql, params);
        const b = await call(after, sql, params);
        expect(b, `round ${round}: ${JSON.stringify(params).slice(0, 2000)}`).toEqual(a);
        calls++;
      }
      // A batch the set path cannot hold as jsonb (a NUL byte): every commit goes one at a time.
      const nul = `[${MALFORMED[12]},${commitJson(commitOf(r, now++, versions, eventIds), true)}]`;
      const sql = "SELECT $schema.oncely_commit_packed($1::text, $2::integer[], $3) AS r";
      expect(await call(after, sql, [nul, []])).toEqual(await call(before, sql, [nul, []]));
      expect(await dump(after)).toEqual(await dump(before));
      expect(calls).toBe(150);
    });
  },
);
