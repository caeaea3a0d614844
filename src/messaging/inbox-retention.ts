import { type Clock, systemClock } from "../core/clock.js";
import { InvalidInputError } from "../core/errors.js";
import { type Logger, silentLogger } from "../core/logger.js";
import type { Journal } from "../journal/types.js";

/** Default retention of inbox (dedup) rows: 7 days. */
export const DEFAULT_INBOX_RETENTION_MS = 7 * 24 * 60 * 60_000;

export interface InboxRetentionOptions {
  journal: Journal;
  /**
   * How long a handled message id stays deduplicated. Must cover the longest redelivery period
   * (outbox retries, broker redelivery, manual replays, disaster recovery): a duplicate arriving
   * after its inbox row was pruned is handled again. Default 7 days.
   */
  retentionMs?: number;
  /** How often the job runs (default 1 hour). */
  intervalMs?: number;
  clock?: Clock;
  logger?: Logger;
}

function checkRetention(retentionMs: number): number {
  if (!Number.isFinite(retentionMs) || retentionMs <= 0) {
    throw new InvalidInputError(`inbox retention must be a positive number of ms, got ${retentionMs}`);
  }
  return retentionMs;
}

/**
 * Delete inbox rows recorded strictly before `now - retentionMs`. A row younger than the window
 * (recorded at or after its start) is never touched. Returns how many rows were deleted.
 */
export async function pruneInbox(journal: Journal, options: { now: number; retentionMs?: number }): Promise<number> {
  const retentionMs = checkRetention(options.retentionMs ?? DEFAULT_INBOX_RETENTION_MS);
  return journal.pruneInbox(options.now - retentionMs);
}

/** The pruning job: explicit, configurable, never implicit. `runOnce` for tests, `start`/`stop` for real use. */
export class InboxRetention {
  readonly retentionMs: number;
  private readonly journal: Journal;
  private readonly intervalMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(options: InboxRetentionOptions) {
    this.journal = options.journal;
    this.retentionMs = checkRetention(options.retentionMs ?? DEFAULT_INBOX_RETENTION_MS);
    this.intervalMs = options.intervalMs ?? 60 * 60_000;
    if (!Number.isFinite(this.intervalMs) || this.intervalMs <= 0) {
      throw new InvalidInputError(`inbox pruning interval must be a positive number of ms, got ${this.intervalMs}`);
    }
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
  }

  async runOnce(): Promise<number> {
    const removed = await pruneInbox(this.journal, { now: this.clock.now(), retentionMs: this.retentionMs });
    if (removed > 0) this.logger.info({ removed, retentionMs: this.retentionMs }, "pruned inbox rows");
    return removed;
  }

  start(): void {
    if (this.loop) return;
    this.loop = (async () => {
      while (!this.stopping.signal.aborted) {
        try {
          await this.runOnce();
        } catch (error) {
          this.logger.error({ err: error }, "inbox pruning failed; will try again next interval");
        }
        await this.clock.sleep(this.intervalMs, this.stopping.signal).catch(() => {});
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }
}
