import { createHash } from "node:crypto";
import { DEFAULT_SLICE_COUNT } from "../core/slices.js";

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
  /**
   * The server functions the client calls (schema/0001_baseline/<name>.sql): the per-commit path of
   * group commit, for a lone commit, and the batch function, for several.
   */
  commitFunction: string;
  commitPackedFunction: string;
  /** NOTIFY channel for outbox wake-ups, one per schema (identifiers are at most 63 bytes). */
  channel: string;
  /** The journal transport's log, and its append functions (one entry, and a batch of them). */
  published: string;
  publishFunction: string;
  publishBatchFunction: string;
  /** NOTIFY channel for appends to the published log, one per schema. */
  publishedChannel: string;
  /** The journal's slice count (see `outboxSlice`): the migration that added outbox slices backfills with it. */
  sliceCount: number;
}

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A per-schema channel name that fits PostgreSQL's 63-byte identifiers. */
const channelName = (prefix: string, schema: string): string => {
  const name = `${prefix}_${schema}`;
  return Buffer.byteLength(name) <= 63
    ? name
    : `${prefix}_${createHash("sha1").update(schema).digest("hex").slice(0, 40)}`;
};

export function tables(schema: string, sliceCount: number = DEFAULT_SLICE_COUNT): Tables {
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
    commitPackedFunction: `${q}.oncely_commit_packed`,
    channel: channelName("oncely_outbox", schema),
    published: `${q}.published`,
    publishFunction: `${q}.oncely_publish`,
    publishBatchFunction: `${q}.oncely_publish_batch`,
    publishedChannel: channelName("oncely_published", schema),
    sliceCount,
  };
}
