import type { OutboxCategory } from "./types.js";

/**
 * A commit with every value already turned into JSON text. SQL back ends encode the whole commit
 * before they open a transaction, so a value JSON cannot hold (a BigInt, a cycle) fails the
 * commit with nothing written, exactly as the memory journal does.
 */
export interface EncodedCommit {
  stream: string | undefined;
  expectedVersion: number | undefined;
  now: number;
  events: EncodedEvent[];
  snapshot: { version: number; schemaVersion: number; state: string } | undefined;
  outbox: {
    id: string;
    category: OutboxCategory;
    kind: string;
    stream: string;
    payload: string;
    notBefore: number;
    /** Set when the row is inserted already leased (handed over to the committing process). */
    leaseOwner: string | null;
    leaseUntil: number | null;
    /** The lease holder's first write, stored at insert (attempts 0 and result null otherwise). */
    attempts: number;
    result: string;
    /** The row's slice (see `outboxSlice`), among the committing journal's slice count. */
    slice: number;
  }[];
  outboxDone: { id: string; outcome: string; result: string }[];
  /** `outcomeOf`: see `InboxEntry`; undefined when the message is recorded by its inbox row alone. */
  inbox: { consumer: string; messageId: string; reply: string; outcomeOf: string | undefined } | undefined;
  /** Every checkpoint of the commit (`Commit.checkpoint` first), each (consumer, source) once. */
  checkpoints: { consumer: string; source: string; version: number; expected: number | undefined }[];
  park: { consumer: string; source: string; version: number; message: string }[];
  unpark: { consumer: string; source: string; version: number }[];
  deadLetters: {
    id: string;
    consumer: string;
    messageId: string | null;
    payload: string;
    error: string;
    stack: string | null;
    attempts: number;
    firstFailedAt: number;
    lastFailedAt: number;
  }[];
  /** `doc` null deletes. */
  documents: { collection: string; id: string; doc: string | null }[];
  /** Entries for the published log, in order, each with its slice among the journal's count. */
  published: { messageId: string; subject: string; body: string; slice: number }[];
}

export interface EncodedEvent {
  eventId: string;
  type: string;
  data: string;
  causationId: string | null;
  correlationId: string | null;
  schemaVersion: number;
}
