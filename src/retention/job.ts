import { positiveMs, RETENTION_DEFAULTS } from "../base/defaults.js";
import type { Clock } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Logger } from "../core/logger.js";

export interface RetentionJobOptions {
  /** How long a record is kept; what it must cover is said by each job. */
  retentionMs?: number;
  /** How often the job runs (default 1 hour). */
  intervalMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/**
 * A retention job: explicit, configurable, never implicit. `runOnce` for tests and the CLI,
 * `start`/`stop` for a schedule on the injected clock. A failed run is logged and tried again at
 * the next interval: retention is housekeeping and never stops the process.
 */
export abstract class RetentionJob {
  readonly retentionMs: number;
  readonly intervalMs: number;
  protected readonly clock: Clock;
  protected readonly logger: Logger;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;

  /** `what` names the records in errors and logs (`inbox`, `outbox`). */
  protected constructor(
    private readonly what: string,
    defaultRetentionMs: number,
    options: RetentionJobOptions,
  ) {
    this.retentionMs = positiveMs(`${what} retention`, options.retentionMs ?? defaultRetentionMs);
    this.intervalMs = positiveMs(`${what} pruning interval`, options.intervalMs ?? RETENTION_DEFAULTS.intervalMs);
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.logger = env.logger;
  }

  /** Delete what is older than `now - retentionMs`; returns how many records went. */
  protected abstract prune(now: number): Promise<number>;

  async runOnce(): Promise<number> {
    const removed = await this.prune(this.clock.now());
    if (removed > 0) this.logger.info({ removed, retentionMs: this.retentionMs }, `pruned ${this.what} rows`);
    return removed;
  }

  start(): void {
    if (this.loop) return;
    this.loop = (async () => {
      while (!this.stopping.signal.aborted) {
        try {
          await this.runOnce();
        } catch (error) {
          this.logger.error({ err: error }, `${this.what} pruning failed; will try again next interval`);
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
