import { documentRecord, inboxRecord, parkedRecord } from "../journal/sql-rows.js";
import type { StateAnswers, StateReads } from "../journal/types.js";
import { prepared } from "./prepared.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

type Kind = keyof StateReads & keyof StateAnswers;

/** One kind of read: its table, its key columns (with their SQL types), its answer and decoder. */
interface Branch {
  kind: Kind;
  table: (t: Tables) => string;
  keys: readonly (readonly [column: string, type: string])[];
  /** What it answers, as five text columns `a`..`e` (UNION ALL needs one row shape). */
  columns: readonly [string, string, string, string, string];
  keysOf: (read: never) => unknown[];
  decode: (row: Record<string, unknown>) => unknown;
}

const BRANCHES: readonly Branch[] = [
  {
    kind: "checkpoints",
    table: (t) => t.checkpoints,
    keys: [
      ["consumer", "text"],
      ["source", "text"],
    ],
    columns: ["x.version::text", "NULL", "NULL", "NULL", "NULL"],
    keysOf: (r: { consumer: string; source: string }) => [r.consumer, r.source],
    decode: (row) => Number(row.a),
  },
  {
    kind: "inbox",
    table: (t) => t.inbox,
    keys: [
      ["consumer", "text"],
      ["message_id", "text"],
    ],
    columns: ["x.consumer", "x.message_id", "x.reply::text", "x.recorded_at::text", "NULL"],
    keysOf: (r: { consumer: string; messageId: string }) => [r.consumer, r.messageId],
    decode: (row) => inboxRecord({ consumer: row.a, message_id: row.b, reply: row.c, recorded_at: row.d }),
  },
  {
    kind: "parked",
    table: (t) => t.parked,
    keys: [
      ["consumer", "text"],
      ["source", "text"],
      ["version", "integer"],
    ],
    columns: ["x.consumer", "x.source", "x.version::text", "x.message::text", "x.parked_at::text"],
    keysOf: (r: { consumer: string; source: string; version: number }) => [r.consumer, r.source, String(r.version)],
    decode: (row) => parkedRecord({ consumer: row.a, source: row.b, version: row.c, message: row.d, parked_at: row.e }),
  },
  {
    kind: "documents",
    table: (t) => t.documents,
    keys: [
      ["collection", "text"],
      ["id", "text"],
    ],
    columns: ["x.collection", "x.id", "x.doc::text", "x.updated_at::text", "NULL"],
    keysOf: (r: { collection: string; id: string }) => [r.collection, r.id],
    decode: (row) => documentRecord({ collection: row.a, id: row.b, doc: row.c, updated_at: row.d }),
  },
];

/**
 * `Journal.readState` for many callers at once (the reads a batch of deliveries makes in one turn),
 * as ONE statement: a branch per kind asked for, `unnest` of its keys joined to an index probe,
 * glued with UNION ALL. One statement is one snapshot under READ COMMITTED, so the answers hold
 * together (no commit lands between the checkpoint and the inbox row), and one round trip and one
 * transaction replace up to four. Prepared per combination of kinds (at most fifteen texts).
 */
export async function readStates(q: Queryable, t: Tables, requests: readonly StateReads[]): Promise<StateAnswers[]> {
  const answers: StateAnswers[] = requests.map((r) => ({
    checkpoints: (r.checkpoints ?? []).map(() => 0),
    inbox: (r.inbox ?? []).map(() => undefined),
    parked: (r.parked ?? []).map(() => undefined),
    documents: (r.documents ?? []).map(() => undefined),
  }));
  const selects: string[] = [];
  const values: unknown[][] = [];
  /** Per branch asked for: where each of its keys' answer goes (request, position). */
  const targets: { branch: Branch; at: [number, number][] }[] = [];
  for (const branch of BRANCHES) {
    const at: [number, number][] = [];
    const columns: unknown[][] = branch.keys.map(() => []);
    for (const [r, request] of requests.entries()) {
      for (const [position, read] of (request[branch.kind] ?? []).entries()) {
        at.push([r, position]);
        for (const [c, value] of branch.keysOf(read as never).entries()) columns[c]?.push(value);
      }
    }
    if (at.length === 0) continue;
    const tag = targets.length;
    const params = branch.keys.map(([, type], c) => `$${values.length + c + 1}::${type}[]`).join(", ");
    const names = branch.keys.map((_, c) => `k${c}`).join(", ");
    const match = branch.keys.map(([column], c) => `${column} = r.k${c}`).join(" AND ");
    const answer = branch.columns.map((c, n) => `${c === "NULL" ? "NULL::text" : c} AS ${"abcde"[n]}`).join(", ");
    selects.push(
      `SELECT ${tag} AS q, r.i, ${answer}
       FROM unnest(${params}) WITH ORDINALITY AS r(${names}, i)
       CROSS JOIN LATERAL (SELECT * FROM ${branch.table(t)} WHERE ${match}) x`,
    );
    values.push(...columns);
    targets.push({ branch, at });
  }
  if (selects.length === 0) return answers;
  const result = await q.query(prepared(selects.join("\nUNION ALL\n"), values));
  for (const row of result.rows) {
    const target = targets[Number(row.q)];
    const [r, position] = target?.at[Number(row.i) - 1] ?? [];
    if (target === undefined || r === undefined || position === undefined) continue;
    (answers[r]?.[target.branch.kind] as unknown[])[position] = target.branch.decode(row);
  }
  return answers;
}
