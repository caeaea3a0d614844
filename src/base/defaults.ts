import { InvalidInputError } from "./errors.js";

/**
 * Option defaults shared by more than one component, in one place: a component reads its default
 * from here instead of restating the number, so two components that must agree (the inbox and
 * outbox retention windows) cannot drift apart.
 */

const DAY_MS = 24 * 60 * 60_000;

/**
 * The longest time within which a request, message or integration event may be delivered again
 * (client retries, outbox redelivery, broker redelivery, manual replays, restores). Every dedup
 * record (inbox row, done outbox row) is kept at least this long. 7 days.
 */
export const DEFAULT_REDELIVERY_WINDOW_MS = 7 * DAY_MS;

export const RETENTION_DEFAULTS = {
  /** How long a handled message id stays deduplicated by the inbox. */
  inboxRetentionMs: DEFAULT_REDELIVERY_WINDOW_MS,
  /** How long a done outbox row is kept (its key still turns a re-insert into a no-op). */
  outboxRetentionMs: DEFAULT_REDELIVERY_WINDOW_MS,
  /** How long an entry of the journal transport's published log is kept at least (its publish dedup window). */
  publishedRetentionMs: DEFAULT_REDELIVERY_WINDOW_MS,
  /** How often a retention job runs. */
  intervalMs: 60 * 60_000,
  /** Rows deleted per statement: each batch is a short transaction, so a large backlog never holds a long lock. */
  pruneBatchSize: 1_000,
} as const;

/**
 * How an effect whose provider answered "not performed" (a 429 or 503 before acting, or a thrown
 * `RetryableError`) is retried: with the same key, on an exponential backoff with a cap, within a
 * budget of attempts and of time. Past either budget the effect escalates to the reconciliation
 * queue (a warning, `oncely_effect_escalations_total`), never retried forever in silence.
 */
export const EFFECT_RETRY_DEFAULTS = {
  /** 1 s, 2 s, 4 s... capped at one minute, a fifth of each delay randomized. */
  backoff: { initialMs: 1_000, maxMs: 60_000, multiplier: 2, jitter: 0.2 },
  /** Not-performed answers of one key before it escalates (about a quarter of an hour on the backoff above). */
  notPerformedMaxAttempts: 20,
  /** Time since its first not-performed answer after which a key escalates rather than wait for another retry. */
  notPerformedMaxAgeMs: 60 * 60_000,
} as const;

export const GROUP_COMMIT_DEFAULTS = {
  /** Most commits in one batch. */
  maxBatch: 256,
  /** Batches in flight at once on PostgreSQL: while one waits for its WAL flush, the next is applied. */
  postgresInFlight: 3,
  /**
   * Batches a burst is spread over on PostgreSQL: two, so that this process handles one batch's
   * answers while the server applies the other, where one batch of everything had the process and
   * the server take turns (measured on the order workflow, 50 in flight: see docs/benchmarks.md).
   */
  postgresSpreadOver: 2,
} as const;

/** A duration option that must be a positive, finite number of ms; the error names the option. */
export function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidInputError(`${name} must be a positive number of ms, got ${value}`);
  }
  return value;
}

/** A count option that must be a positive integer; the error names the option. */
export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new InvalidInputError(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

export const CONSOLE_DEFAULTS = {
  /** Where the operator console is mounted. */
  prefix: "/console",
  /** How often the console's live feed looks at the journal while a page listens (ms). */
  pollMs: 2_000,
  /** Rows shown per list page (effects, dead letters, operator actions). */
  pageSize: 200,
  /** Events, effects and messages shown per actor in a timeline. */
  timelineLimit: 1_000,
  /** Streams searched by name when a timeline query is neither an address nor an effect key. */
  streamScanLimit: 10_000,
} as const;

/** Waiting for a result (`waitFor`, `waitForEffect`, `host.drain()`). */
export const AWAIT_DEFAULTS = {
  /** How long a wait lasts before it rejects with `WaitTimeoutError`. */
  timeoutMs: 30_000,
  /**
   * The fallback poll, from its first interval doubling to its cap, reset by an outbox wake-up (a
   * commit of this process that a wait follows leaves it as it is). A
   * commit of this process wakes a waiter at once, and on PostgreSQL so does another process's
   * commit that adds outbox rows (NOTIFY); the poll covers the commits nothing announces (an
   * outcome recorded by another process).
   */
  pollFirstMs: 25,
  pollMaxMs: 1_000,
} as const;

export const JOURNAL_TRANSPORT_DEFAULTS = {
  /** Fallback poll of the published log when no wake-up arrives (another SQLite process, a lost NOTIFY). */
  pollMs: 1_000,
  /** Entries read per query; also how far a reader reads ahead of its oldest unsettled entry. */
  batchSize: 256,
  /** Backoff for a handler that throws instead of returning an outcome. */
  retryBaseMs: 100,
  retryMaxMs: 10_000,
} as const;

export const HOST_DEFAULTS = {
  /**
   * How often a host looks for gaps of each sequenced consumer (clock time): a gap open past its
   * timeout is alerted at most this long after. One read of the consumer's parked messages a look.
   */
  gapCheckEveryMs: 5_000,
} as const;
