import type { OutboxCategory, OutboxStatus } from "./outbox-store.js";

/**
 * What is waiting in the journal, counted per group, for metrics collected on scrape. Done outbox
 * rows and resolved dead letters are left out: they only grow (counters say how many finished), and
 * leaving them out keeps each query on the rows still open.
 */
export interface JournalSummary {
  /** Outbox rows not done, per category, kind and status, sorted by those three. */
  outbox: { category: OutboxCategory; kind: string; status: OutboxStatus; count: number; oldestCreatedAt: number }[];
  /** Parked messages per consumer, sorted by consumer. */
  parked: { consumer: string; count: number; oldestParkedAt: number }[];
  /** Open dead letters per consumer, sorted by consumer. */
  deadLetters: { consumer: string; count: number; oldestFailedAt: number }[];
}

/**
 * The journal as a whole: its name, its schema, what is open in it, and closing it. Used by
 * whoever opens a journal (the host, the CLI) and by metrics collected on scrape.
 */
export interface JournalAdmin {
  /** Back-end name for messages and reports: `memory`, `sqlite`, `postgres`. */
  readonly backend: string;
  /**
   * The number of slices its outbox rows are spread over (see `outboxSlice`; the back ends' option,
   * `DEFAULT_SLICE_COUNT` by default). Optional for journals written before slices: absent means
   * the default.
   */
  readonly sliceCount?: number;
  /** Create or upgrade the schema. Idempotent and versioned; safe to call from several processes. */
  migrate(): Promise<void>;
  /** Counts of what is still open (see `JournalSummary`): one grouped read per table. */
  summarize(): Promise<JournalSummary>;
  close(): Promise<void>;
}
