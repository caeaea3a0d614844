import { positiveMs, RETENTION_DEFAULTS } from "../base/defaults.js";
import type { InboxStore } from "../journal/types.js";
import { RetentionJob, type RetentionJobOptions } from "./job.js";

/** Default retention of inbox (dedup) rows: the redelivery window, 7 days. */
export const DEFAULT_INBOX_RETENTION_MS = RETENTION_DEFAULTS.inboxRetentionMs;

export interface InboxRetentionOptions extends RetentionJobOptions {
  journal: Pick<InboxStore, "pruneInbox">;
  /**
   * How long a handled message id stays deduplicated. Must cover the longest redelivery period
   * (outbox retries, broker redelivery, manual replays, disaster recovery): a duplicate arriving
   * after its inbox row was pruned is handled again. Default 7 days.
   */
  retentionMs?: number;
}

/**
 * Delete inbox rows recorded strictly before `now - retentionMs`. A row younger than the window
 * (recorded at or after its start) is never touched. Returns how many rows were deleted.
 */
export async function pruneInbox(
  journal: Pick<InboxStore, "pruneInbox">,
  options: { now: number; retentionMs?: number },
): Promise<number> {
  const retentionMs = positiveMs("inbox retention", options.retentionMs ?? DEFAULT_INBOX_RETENTION_MS);
  return journal.pruneInbox(options.now - retentionMs);
}

/** The inbox pruning job. */
export class InboxRetention extends RetentionJob {
  private readonly journal: Pick<InboxStore, "pruneInbox">;

  constructor(options: InboxRetentionOptions) {
    super("inbox", DEFAULT_INBOX_RETENTION_MS, options);
    this.journal = options.journal;
  }

  protected prune(now: number): Promise<number> {
    return pruneInbox(this.journal, { now, retentionMs: this.retentionMs });
  }
}
