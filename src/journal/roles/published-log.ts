/**
 * An integration event in the journal's published log (the journal transport's log). Positions
 * grow in commit order: an entry never becomes visible after one with a higher position did.
 * They may skip numbers (an append of a known message id can burn one), so readers never count.
 */
export interface PublishedRecord {
  position: number;
  /** The broker dedup id (`brokerMessageId(envelope)`); unique in the log. */
  messageId: string;
  subject: string;
  /** The encoded envelope, as a transport delivers it. */
  body: string;
  publishedAt: number;
  /**
   * The slice of its partition key among the journal's `sliceCount` (see `NewPublished.key`): a
   * reader that owns some slices reads only theirs (`readPublished`'s `slices`).
   */
  slice: number;
}

export interface NewPublished {
  messageId: string;
  subject: string;
  body: string;
  /**
   * The partition key: the id of the producing aggregate (`envelope.aggregateId`), which every
   * event of one source stream shares, so a stream's events land in one slice and keep their order
   * for the slice's reader. The journal stores `sliceOf(key, sliceCount)`; absent, the message id's.
   */
  key?: string;
}

/**
 * The published log's part of a commit: entries appended in the commit's own transaction, so an
 * integration event is published by the commit that decided it (the journal transport's hand-over
 * at commit, docs/design/event-hand-over.md) with no outbox row, claim or mark. Each is appended as
 * `appendPublished` appends it (a known message id is stored once, in its first position), in list
 * order, and positions follow commit order: an entry of a later commit never gets a lower position.
 * A commit refused for any reason appends nothing.
 */
export interface PublishedWrites {
  published?: NewPublished[] | undefined;
}

/** The published log as its readers use it: entries after a position, and a wake-up on appends. */
export interface PublishedLogReader {
  /**
   * Entries with position > `after`, in position order, at most `limit` (default all); with
   * `slices`, only entries of those slices (an empty list reads nothing).
   */
  readPublished(after: number, limit?: number, slices?: readonly number[]): Promise<PublishedRecord[]>;
  /**
   * Wake-up signal after an append to the published log (in-process for memory/SQLite,
   * LISTEN/NOTIFY for PostgreSQL). Returns an unsubscribe function.
   */
  onPublished(listener: () => void): () => void;
}

/**
 * The published log: the integration events the journal transport delivers, in position order,
 * read by each subscriber from its own position (a checkpoint under `PUBLISHED_READER_SOURCE`).
 */
export interface PublishedLog extends PublishedLogReader {
  /**
   * Append an integration event to the published log; returns its position. A message id already
   * in the log is stored once: its existing position is returned and nothing is written.
   */
  appendPublished(entry: NewPublished, now: number): Promise<number>;
  /**
   * Delete at most `limit` (default 1,000) entries published strictly before `before` that every
   * registered reader has passed: a reader is a checkpoint under source `PUBLISHED_READER_SOURCE`
   * (`src/journal/published.ts`), and its version is its position. A reader of some slices keeps,
   * besides, a position per slice (source `publishedSliceSource(slice)`): for an entry of slice s,
   * its position is the larger of the two. No reader: nothing is deleted.
   */
  prunePublished(before: number, limit?: number): Promise<number>;
}
