import { positiveInteger, RETENTION_DEFAULTS } from "../base/defaults.js";
import type { PublishedLog } from "../journal/types.js";
import { RetentionJob, type RetentionJobOptions } from "./job.js";

export interface PublishedRetentionOptions extends RetentionJobOptions {
  journal: Pick<PublishedLog, "prunePublished">;
  /** How long an entry of the published log is kept at least (default 7 days, the redelivery window). */
  retentionMs?: number;
  /** Entries per delete statement (default 1,000). */
  batchSize?: number;
}

/**
 * Retention of the journal transport's published log. The log is the transport's own, apart from
 * the outbox: the relay copies an event into it at publish, so outbox retention (`pruneOutbox`)
 * never takes an event from a reader. An entry goes only when it is older than the window AND
 * every registered reader (every consumer name that ever subscribed) has passed it; a consumer
 * that stays away keeps everything from its position on (its checkpoint under
 * `PUBLISHED_READER_SOURCE` says where it stands). While an entry is kept, publishing its message
 * id again adds nothing (the log's dedup window).
 */
export class PublishedRetention extends RetentionJob {
  private readonly journal: Pick<PublishedLog, "prunePublished">;
  private readonly batchSize: number;

  constructor(options: PublishedRetentionOptions) {
    super("published log", RETENTION_DEFAULTS.publishedRetentionMs, options);
    this.journal = options.journal;
    this.batchSize = positiveInteger(
      "published log prune batch size",
      options.batchSize ?? RETENTION_DEFAULTS.pruneBatchSize,
    );
  }

  protected async prune(now: number): Promise<number> {
    const before = now - this.retentionMs;
    let removed = 0;
    for (;;) {
      const batch = await this.journal.prunePublished(before, this.batchSize);
      removed += batch;
      if (batch < this.batchSize) return removed;
    }
  }
}
