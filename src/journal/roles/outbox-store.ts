/** What an outbox row stands for. */
export type OutboxCategory = "effect" | "message" | "event";

/**
 * pending: to be delivered (at or after `notBefore`).
 * resolving: the outcome is Unknown; the resolver asks the provider by key.
 * reconcile: still Unknown after its budget; waits for an operator.
 * done: finished; `outcome` says how.
 * dead: a message or event that could not be delivered after its retries.
 */
export type OutboxStatus = "pending" | "resolving" | "reconcile" | "done" | "dead";

export interface NewOutboxRow {
  /** Stable key: the effect's idempotency key, a message's delivery id, an integration event's id. */
  id: string;
  category: OutboxCategory;
  /** Effect kind (`payment`), target actor type for messages, or event type / subject for events. */
  kind: string;
  /** The stream (actor) that owns the row and receives its outcome. */
  stream: string;
  payload: unknown;
  /** Earliest time to deliver (epoch ms); a durable timer when in the future. */
  notBefore: number;
  /**
   * Insert the row already leased (hand-over at commit): the committing process runs it itself,
   * with no claim. `owner` is a fresh fencing token for this row; others take it after `until`.
   * `attempts` and `result`, when given, are stored as the lease holder's first write would
   * leave them (a dispatcher recording its first attempt in the intent's own commit).
   */
  lease?: { owner: string; until: number; attempts?: number; result?: unknown } | undefined;
}

export interface OutboxRow extends NewOutboxRow {
  status: OutboxStatus;
  attempts: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  lastError: string | null;
  /** Set when done: how it ended (`completed`, `failed`, `delivered`, `published`, `settled`...). */
  outcome: string | null;
  result: unknown;
  createdAt: number;
  updatedAt: number;
  /** Insertion order, monotonic; per stream it follows commit order. */
  seq: number;
}

export interface OutboxDone {
  id: string;
  outcome: string;
  result?: unknown;
}

/** The outbox's part of a commit (see `Commit`). */
export interface OutboxWrites {
  outbox?: NewOutboxRow[] | undefined;
  outboxDone?: OutboxDone[] | undefined;
}

export interface ClaimOptions {
  /** Lease owner id (one per dispatcher). */
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Rows in these statuses are candidates (default `["pending"]`). */
  statuses?: OutboxStatus[];
  categories?: OutboxCategory[];
  /**
   * Only claim a row when no earlier (lower seq) row of the same stream and category is still
   * pending/leased: delivery per stream then follows commit order (used by the event relay).
   */
  inStreamOrder?: boolean;
  /**
   * Only rows of these slices (see `outboxSlice`: the slice of the actor that handles the row), each
   * from 0 to the journal's slice count - 1; an empty list claims nothing. Absent: every slice,
   * with no filter at all (a single worker pays nothing for slices).
   */
  slices?: readonly number[];
}

/** Fields a dispatcher may change on a row it holds the lease of. */
export interface OutboxUpdate {
  status?: OutboxStatus;
  attempts?: number;
  notBefore?: number;
  lastError?: string | null;
  outcome?: string | null;
  result?: unknown;
  /** Release the lease (default true). */
  releaseLease?: boolean;
}

export interface OutboxFilter {
  status?: OutboxStatus | OutboxStatus[];
  category?: OutboxCategory;
  kind?: string;
  stream?: string;
  limit?: number;
}

/** The outbox as it is read: a row by its key, rows by a filter. */
export interface OutboxReader {
  getOutbox(id: string): Promise<OutboxRow | undefined>;
  listOutbox(filter?: OutboxFilter): Promise<OutboxRow[]>;
}

/**
 * The outbox: rows a commit inserts (effects to run, messages to deliver, integration events to
 * publish) and the leases that hand each row to one worker at a time. A commit inserts rows and
 * marks them done (`Commit.outbox`, `Commit.outboxDone`); the lease holder updates its row
 * (`updateOutbox`); an operator or a resolver changes one without a lease (`forceOutbox`).
 */
export interface OutboxStore extends OutboxReader {
  /** Claim due rows with a lease: rows whose lease is absent or expired and notBefore <= now. */
  claimOutbox(options: ClaimOptions): Promise<OutboxRow[]>;
  /** Update a row only while `owner` holds its lease. Returns false when the lease was lost. */
  updateOutbox(id: string, owner: string, update: OutboxUpdate, now: number): Promise<boolean>;
  /** Operator or resolver change without a lease (e.g. settle from reconciliation). */
  forceOutbox(id: string, update: OutboxUpdate, now: number): Promise<boolean>;
  /**
   * Delete at most `limit` (default 1,000) `done` rows whose `updatedAt` is strictly before
   * `before`; returns how many. Rows in any other status are never deleted, whatever their age.
   * One short statement per call: call again until it returns less than `limit`.
   * A pruned key is forgotten: a commit that inserts it again creates a new pending row (see
   * `OutboxRetention` for the rule that keeps this from running an effect twice).
   */
  pruneOutbox(before: number, limit?: number): Promise<number>;
  /**
   * Wake-up signal: called after commits that added outbox rows due now and not handed over at
   * commit (a row due later, such as a durable timer, is found by the claimer's poll), and after
   * updates that made a row claimable again (in-process for memory/SQLite, LISTEN/NOTIFY for
   * PostgreSQL so other processes wake too). With `categories`, only when rows of one of them were
   * added, or when what changed is not known (another process's NOTIFY, an update, a reconnect);
   * with none (`[]`), only then: a waiter that hears this process's commits itself listens so.
   * With `owns` (a worker holding some slices), only when rows of a slice it owns were added, or
   * when what changed is not known: on PostgreSQL a commit's NOTIFY names the slices of its rows,
   * so a commit wakes the owner of its rows, not every worker.
   * A wake-up means "look at the outbox", never a count. Returns an unsubscribe function.
   */
  onOutbox(listener: () => void, categories?: readonly OutboxCategory[], owns?: (slice: number) => boolean): () => void;
}
