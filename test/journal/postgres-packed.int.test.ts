import pg from "pg";
import { describe, expect, it } from "vitest";
import { encodeCommit } from "../../src/journal/encode.js";
import type { Commit } from "../../src/journal/types.js";
import { commitJson } from "../../src/postgres/commit-batch.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { DONE_FIELDS, EVENT_FIELDS, OUTBOX_FIELDS, RARE_ARRAYS } from "../../src/postgres/packed-rows.js";
import { tables } from "../../src/postgres/tables.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

const service = await probePostgres();

/** A commit with every part filled, rows with nulls among their fields. */
const everything = (rare: boolean): Commit => ({
  stream: "order/1",
  expectedVersion: 0,
  events: [
    { eventId: "e1", type: "Placed", data: { n: 1, nested: { deep: [1, null] } } },
    { eventId: "e2", type: "Paid", data: null, causationId: "c1", correlationId: "k1", schemaVersion: 2 },
  ],
  outbox: [
    {
      id: "order:1:charge",
      category: "effect",
      kind: "charge",
      stream: "order/1",
      payload: { amount: 5 },
      notBefore: 7,
    },
    {
      id: "order:1:mail",
      category: "effect",
      kind: "mail",
      stream: "order/1",
      payload: { to: "a@b" },
      notBefore: 8,
      lease: { owner: "me#1", until: 99, attempts: 1, result: { lastRunAt: 8 } },
    },
  ],
  outboxDone: [{ id: "order:0:charge", outcome: "completed", result: { ok: true } }],
  inbox: { consumer: "order/1", messageId: "m1", reply: { ok: 1 } },
  ...(rare
    ? {
        park: [{ consumer: "c", source: "s", version: 3, message: { x: 1 } }],
        unpark: [{ consumer: "c", source: "s", version: 2 }],
        deadLetters: [
          {
            id: "d1",
            consumer: "c",
            messageId: null,
            payload: { y: 2 },
            error: "bad",
            stack: null,
            attempts: 1,
            firstFailedAt: 1,
            lastFailedAt: 2,
          },
        ],
        documents: [{ collection: "views", id: "v1", doc: { z: 3 } }],
      }
    : {}),
  now: 10,
});

/** A packed commit read back with the field lists: the object format's commit, or the test fails. */
function readPacked(text: string): Record<string, unknown> {
  const c = JSON.parse(text) as Record<string, unknown>;
  const rows = (key: string, fields: readonly string[]) =>
    ((c[key] ?? []) as unknown[][]).map((row) => Object.fromEntries(fields.map((f, i) => [f, row[i]])));
  const out: Record<string, unknown> = {
    ...c,
    events: rows("events", EVENT_FIELDS),
    outbox: rows("outbox", OUTBOX_FIELDS),
    done: rows("done", DONE_FIELDS),
  };
  for (const name of RARE_ARRAYS) out[name] = c[name] ?? [];
  return out;
}

describe("the packed wire format (client side)", () => {
  for (const rare of [false, true]) {
    it(`holds what the object format holds, fields in the orders the server reads (${rare ? "every part" : "rare arrays empty"})`, () => {
      const encoded = encodeCommit(everything(rare));
      const packed = commitJson(encoded, true);
      expect(readPacked(packed)).toEqual(JSON.parse(commitJson(encoded)));
      for (const name of RARE_ARRAYS) expect(packed.includes(`"${name}":`)).toBe(rare);
    });
  }
});

describe.skipIf(!service.available)(
  `the packed wire format (server side)${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    for (const rare of [false, true]) {
      it(`oncely_unpack gives the per-commit path the object format's commit (${rare ? "every part" : "rare arrays empty"})`, async () => {
        const { schema, drop } = await freshPgSchema("packed");
        const journal = postgresJournal({ connectionString: PG_URL, schema });
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        try {
          await journal.migrate();
          const encoded = encodeCommit(everything(rare));
          const unpack = `${tables(schema).qschema}.oncely_unpack`;
          const { rows } = await client.query(
            `SELECT ${unpack}($1::jsonb) = $2::jsonb AS same, ${unpack}($3::jsonb) = $3::jsonb AS update_kept`,
            [commitJson(encoded, true), commitJson(encoded), '{"update": {"id": "x", "owner": null}}'],
          );
          expect(rows[0]).toEqual({ same: true, update_kept: true });
        } finally {
          await client.end();
          await journal.close();
          await drop();
        }
      });
    }
  },
);
