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
  /** Batches in flight elsewhere (SQLite, the published log): one, so the next batch forms while one is written. */
  maxInFlight: 1,
  /** A batch takes everything queued (up to `maxBatch`) unless a journal spreads a burst (`postgresSpreadOver`). */
  spreadOver: 1,
  /** The smallest batch a split makes: each batch has a fixed cost in the store, so a split never makes tiny ones. */
  minSplit: 8,
  /** Times a commit answered `retry` (a deadlock, an append race) is queued again before its error is returned. */
  maxRetries: 5,
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

/** The actor runtime (`createRuntime`, `createHost({ runtime })`). */
export const RUNTIME_DEFAULTS = {
  /**
   * Most actors kept in memory: a bound on the cache's memory, high enough that a process rarely
   * reloads an actor it used recently; beyond it the least recently used idle actors are dropped
   * (and rebuilt from the journal when used again). A round number, not tuned by a measurement.
   */
  maxActive: 10_000,
  /** An actor unused this long is dropped from memory: an actor idle for minutes costs one reload when it wakes. */
  idleMs: 5 * 60_000,
  /**
   * Decide-again attempts after version conflicts before a command fails with `RetriesExhaustedError`:
   * each conflict means another writer moved the stream, so thirty in a row is a hot spot to see,
   * not one to retry forever.
   */
  maxConflictRetries: 30,
} as const;

/** The dispatcher of effects, messages and timers (`new Dispatcher`, `createHost({ dispatcher })`). */
export const DISPATCHER_DEFAULTS = {
  /** Rows claimed per round: one short claim statement covers several rounds of `concurrency`. */
  batchSize: 32,
  /** Rows of one batch handled at once: handlers mostly wait on providers, so a few overlap. */
  concurrency: 8,
  /**
   * Fallback poll when no wake-up arrives (a commit of another process on SQLite), and the
   * granularity of durable timers: a timer fires at most this late.
   */
  pollIntervalMs: 1_000,
  /**
   * A message between actors is retried this often before it goes dead: its receiver is in this
   * process's journal, so a failure is a refusal or an outage, and 25 attempts on the backoff below
   * (0.5 s doubling to a minute) last about twenty minutes, long enough to outlive a restart.
   */
  messageMaxAttempts: 25,
  messageBackoff: { initialMs: 500, maxMs: 60_000, multiplier: 2, jitter: 0.2 },
} as const;

/** The default effect policy (`DEFAULT_EFFECT_POLICY`); the not-performed retries are `EFFECT_RETRY_DEFAULTS`. */
export const EFFECT_POLICY_DEFAULTS = {
  /** A handler call past this is treated as an ambiguous run (outcome Unknown): most provider calls take well under it. */
  timeoutMs: 10_000,
  /** Ambiguous runs of one key before it escalates, when the provider dedups by key (otherwise there is no rerun). */
  maxAttempts: 5,
  /** Lookups of an Unknown outcome before it goes to the reconciliation queue. */
  lookupAttempts: 10,
  /** 5 s doubling to 5 min: a provider's record of a call may take a while to be visible. */
  lookupBackoff: { initialMs: 5_000, maxMs: 5 * 60_000, multiplier: 2, jitter: 0.2 },
  /**
   * A claimed row's lease: three times the handler timeout, so a call that times out is recorded
   * before another dispatcher can take the row; a dead dispatcher's rows wait this long.
   */
  leaseMs: 30_000,
} as const;

/** Integration events: the relay, consumers and the transports they use. */
export const MESSAGING_DEFAULTS = {
  /**
   * Deliveries of one message before a consumer dead-letters it (terminal errors at once): enough
   * to ride out a blip of what the handler calls, few enough that a poison message is out of the
   * way within seconds on the backoff below (0.2 + 0.4 + 0.8 + 1.6 s between the five).
   */
  maxDeliveries: 5,
  /** Messages handled at once per subscription: handlers wait on the journal, so several overlap. */
  concurrency: 16,
  /** A consumer's (and a broker subscription's) backoff between deliveries of a failing message. */
  retryBaseMs: 200,
  retryMaxMs: 30_000,
  /**
   * A message written by a newer release is left for a newer worker: nak'ed after 1 s, doubling to
   * 30 s (see `ConsumerOptions.deferBaseMs`).
   */
  deferBaseMs: 1_000,
  deferMaxMs: 30_000,
  /** A consumer's attempts after optimistic-concurrency conflicts with another instance. */
  consumerConflictRetries: 10,
  /** A sequenced consumer's gap open this long is alerted on: redeliveries close most gaps in seconds. */
  gapTimeoutMs: 60_000,
  /** The in-process transport's backoff for a handler that throws (as the journal transport's). */
  inProcessRetryBaseMs: JOURNAL_TRANSPORT_DEFAULTS.retryBaseMs,
  inProcessRetryMaxMs: JOURNAL_TRANSPORT_DEFAULTS.retryMaxMs,
} as const;

/** The relay of integration events from the outbox to a transport. */
export const RELAY_DEFAULTS = {
  /** A claimed row not marked within this is claimed again (and republished, deduplicated by the broker). */
  leaseMs: 30_000,
  /** Rows per claim; with in-stream order at most one row per stream per claim. */
  batchSize: 100,
  /** Fallback poll when no outbox signal arrives (another process's commit on SQLite). */
  pollMs: 1_000,
  /** Backoff for a publish that failed (broker unreachable): retried, never dropped. */
  retryBaseMs: 200,
  retryMaxMs: 30_000,
} as const;

/** NATS JetStream (`oncely/nats`). */
export const NATS_DEFAULTS = {
  /**
   * Redelivery after this long without ack or progress. NATS's own default is 30 s: with workers
   * killed every few seconds (the chaos run), each kill left the messages it held waiting 30 s, and
   * orders took minutes.
   */
  ackWaitMs: 5_000,
  /** The stream's window in which a repeated `Nats-Msg-Id` (a relay's republish) is stored once: NATS's default. */
  duplicateWindowMs: 120_000,
  /** Unacknowledged messages per durable: bounds what a crashed consumer held, far above `concurrency`. */
  maxAckPending: 1_000,
  /** A publish not stored within this fails and the relay retries it (same message id, so stored once). */
  publishTimeoutMs: 5_000,
} as const;

/** Slice ownership (`SliceLeaseManager`, `CommandRouter`). */
export const OWNERSHIP_DEFAULTS = {
  /** A slice lease not renewed within this lapses: a dead worker's slices move within about 6 s. */
  leaseMs: 6_000,
  /** Acquisitions and releases per round: slices move a few at a time, so no worker takes all at a start. */
  maxMovesPerRound: 4,
  /** A forwarded command not answered by its owner within this fails with `ForwardTimeoutError`. */
  forwardTimeoutMs: 30_000,
  /**
   * A command sent straight to its owner's peer endpoint that gets no answer within this goes
   * through the journal instead (same message id, so it runs once). Short: a slow peer costs a
   * fallback, not a stall; a command still running there meets its own inbox row.
   */
  peerTimeoutMs: 2_000,
  /**
   * A peer that cannot be reached is warned about once per this per endpoint and reason, with how
   * many fallbacks were not logged since (`oncely_peer_fallbacks_total` counts each): during an
   * outage every command to that worker falls back, and a warning each would bury the log.
   */
  peerWarnIntervalMs: 10_000,
} as const;

/** The journals' connections and group commit (the shared group-commit defaults are `GROUP_COMMIT_DEFAULTS`). */
export const JOURNAL_DEFAULTS = {
  /** SQLite: how long a write waits for another process's lock before `SQLITE_BUSY`. */
  sqliteBusyTimeoutMs: 5_000,
  /**
   * SQLite: most commits in one group-commit transaction. Twice PostgreSQL's: SQLite writes a
   * batch in this process with no round trip, so a batch is bounded only by how long it holds the
   * write lock. Set with group commit's introduction, not tuned by a measurement since.
   */
  sqliteMaxBatch: 512,
  /** PostgreSQL: connections in the pool (pg's own default). */
  postgresPoolMax: 10,
} as const;

/** Idempotent operations (`IdempotentOperations`). */
export const OPERATIONS_DEFAULTS = {
  /**
   * A `processing` row older than this is taken over by the next request: longer than any request
   * a client would still wait for, so a live performer is not taken over.
   */
  staleAfterMs: 5 * 60_000,
} as const;
