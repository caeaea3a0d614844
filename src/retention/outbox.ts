import { DEFAULT_REDELIVERY_WINDOW_MS, positiveInteger, positiveMs, RETENTION_DEFAULTS } from "../base/defaults.js";
import { InvalidInputError } from "../base/errors.js";
import type { OutboxStore } from "../journal/types.js";
import { RetentionJob, type RetentionJobOptions } from "./job.js";

/** Default retention of done outbox rows: the redelivery window, 7 days. */
export const DEFAULT_OUTBOX_RETENTION_MS = RETENTION_DEFAULTS.outboxRetentionMs;

export interface OutboxPruneOptions {
  now: number;
  /** How long a done row is kept after it was finished (default 7 days). */
  retentionMs?: number | undefined;
  /**
   * The longest time within which a request may be delivered again (default 7 days, as the
   * inbox's retention). The retention may not be shorter: see `OutboxRetention` for why.
   */
  redeliveryWindowMs?: number | undefined;
  /** Rows per delete statement (default 1,000). */
  batchSize?: number | undefined;
}

function checkedWindow(options: Omit<OutboxPruneOptions, "now">): { retentionMs: number; batchSize: number } {
  const retentionMs = positiveMs("outbox retention", options.retentionMs ?? DEFAULT_OUTBOX_RETENTION_MS);
  const redeliveryMs = positiveMs("redelivery window", options.redeliveryWindowMs ?? DEFAULT_REDELIVERY_WINDOW_MS);
  if (retentionMs < redeliveryMs) {
    throw new InvalidInputError(
      `outbox retention (${retentionMs} ms) is shorter than the redelivery window (${redeliveryMs} ms): ` +
        "a request delivered again after its done row was pruned could insert the effect's key anew and run it twice",
    );
  }
  const batchSize = positiveInteger("outbox prune batch size", options.batchSize ?? RETENTION_DEFAULTS.pruneBatchSize);
  return { retentionMs, batchSize };
}

/**
 * Delete done outbox rows finished strictly before `now - retentionMs`, batch after batch (each
 * its own short statement), until none is left. Pending, leased, resolving, reconcile and dead
 * rows are never touched, whatever their age. Returns how many rows were deleted.
 */
export async function pruneOutbox(
  journal: Pick<OutboxStore, "pruneOutbox">,
  options: OutboxPruneOptions,
): Promise<number> {
  const { retentionMs, batchSize } = checkedWindow(options);
  const before = options.now - retentionMs;
  let removed = 0;
  for (;;) {
    const batch = await journal.pruneOutbox(before, batchSize);
    removed += batch;
    if (batch < batchSize) return removed;
  }
}

export interface OutboxRetentionOptions extends RetentionJobOptions {
  journal: Pick<OutboxStore, "pruneOutbox">;
  /** How long a done row is kept (default 7 days); never shorter than `redeliveryWindowMs`. */
  retentionMs?: number;
  /** Default 7 days, the same window as the inbox's retention. */
  redeliveryWindowMs?: number;
  batchSize?: number;
}

/**
 * The outbox pruning job: keeps claim queries fast on a long-running system by deleting done rows
 * once they are older than the retention window.
 *
 * What a done row still guards, and the rule that keeps an effect from running twice:
 * - An outbox row's id is its effect's idempotency key (a message's delivery id, an event's id),
 *   and a commit inserts it "if absent": while the row exists, a decision that requests the same
 *   key again changes nothing. Once the done row is pruned, the same key inserted again is a new
 *   pending row, and the dispatcher runs it (with the same key, so a provider that dedups by key
 *   still acts once, but one that does not would act twice).
 * - The guard of a finished effect is its owner's state, not the outbox: by the protocol, `decide`
 *   answers a Completed or Failed key from the state (events are never pruned) and requests
 *   nothing. An actor that does so never runs a finished effect again, however old its row.
 * - For a decision that would request the key again anyway (a duplicate request under a new
 *   message id, or after its inbox row was pruned, reaching an actor that does not check), the
 *   done row is the only guard, for exactly as long as it is kept. So the retention must cover
 *   the redelivery window: it defaults to that window (the inbox's retention too) and a shorter
 *   one is refused.
 */
export class OutboxRetention extends RetentionJob {
  private readonly journal: Pick<OutboxStore, "pruneOutbox">;
  private readonly redeliveryWindowMs: number | undefined;
  private readonly batchSize: number;

  constructor(options: OutboxRetentionOptions) {
    super("outbox", DEFAULT_OUTBOX_RETENTION_MS, options);
    this.journal = options.journal;
    this.redeliveryWindowMs = options.redeliveryWindowMs;
    this.batchSize = checkedWindow({ ...options, retentionMs: this.retentionMs }).batchSize;
  }

  protected prune(now: number): Promise<number> {
    return pruneOutbox(this.journal, {
      now,
      retentionMs: this.retentionMs,
      redeliveryWindowMs: this.redeliveryWindowMs,
      batchSize: this.batchSize,
    });
  }
}
