import { createHash } from "node:crypto";

/** Fully qualified table names for one schema, so no statement depends on a connection's search_path. */
export interface Tables {
  schema: string;
  /** The quoted schema identifier. */
  qschema: string;
  migrations: string;
  events: string;
  snapshots: string;
  outbox: string;
  inbox: string;
  checkpoints: string;
  parked: string;
  deadLetters: string;
  documents: string;
  /** The group-commit function (see commit-function.ts). */
  commitFunction: string;
  /** The set-wise half of group commit and the function the client calls (see commit-set-function.ts). */
  commitSetFunction: string;
  commitBatchFunction: string;
  /** The batch as one JSON text in and out (migration 8, see commit-json-function.ts). */
  commitJsonFunction: string;
  /** The same with the client naming the commits that share a key (migration 10). */
  commitKeyedFunction: string;
  commitSetKeyedFunction: string;
  /** The same with each commit's rows packed as arrays (migration 11, packed-rows.ts): what the client calls. */
  commitPackedFunction: string;
  commitSetPackedFunction: string;
  /** A packed commit in the object format, for the per-commit path (migration 11). */
  unpackFunction: string;
  /** NOTIFY channel for outbox wake-ups, one per schema (identifiers are at most 63 bytes). */
  channel: string;
  /** The journal transport's log (migration 4) and its append function. */
  published: string;
  publishFunction: string;
  publishBatchFunction: string;
  /** NOTIFY channel for appends to the published log, one per schema. */
  publishedChannel: string;
}

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A per-schema channel name that fits PostgreSQL's 63-byte identifiers. */
const channelName = (prefix: string, schema: string): string => {
  const name = `${prefix}_${schema}`;
  return Buffer.byteLength(name) <= 63
    ? name
    : `${prefix}_${createHash("sha1").update(schema).digest("hex").slice(0, 40)}`;
};

export function tables(schema: string): Tables {
  const q = quoteIdent(schema);
  return {
    schema,
    qschema: q,
    migrations: `${q}.oncely_schema_migrations`,
    events: `${q}.events`,
    snapshots: `${q}.snapshots`,
    outbox: `${q}.outbox`,
    inbox: `${q}.inbox`,
    checkpoints: `${q}.checkpoints`,
    parked: `${q}.parked`,
    deadLetters: `${q}.dead_letters`,
    documents: `${q}.documents`,
    commitFunction: `${q}.oncely_commit`,
    commitSetFunction: `${q}.oncely_commit_set`,
    commitBatchFunction: `${q}.oncely_commit_batch`,
    commitJsonFunction: `${q}.oncely_commit_json`,
    commitKeyedFunction: `${q}.oncely_commit_keyed`,
    commitSetKeyedFunction: `${q}.oncely_commit_set_keyed`,
    commitPackedFunction: `${q}.oncely_commit_packed`,
    commitSetPackedFunction: `${q}.oncely_commit_set_packed`,
    unpackFunction: `${q}.oncely_unpack`,
    channel: channelName("oncely_outbox", schema),
    published: `${q}.published`,
    publishFunction: `${q}.oncely_publish`,
    publishBatchFunction: `${q}.oncely_publish_batch`,
    publishedChannel: channelName("oncely_published", schema),
  };
}
