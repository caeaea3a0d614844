/**
 * Group commit: commits that arrive while a batch is being written queue up and go to the store
 * together, as one transaction (one round trip, one fsync). A batch is a transport detail: each
 * commit keeps its own checks and its own fate, and its caller gets its own result or error.
 *
 * Failure window: when the store cannot say whether the batch's transaction committed (the
 * connection dropped during COMMIT), every commit of the batch is ambiguous and each caller gets
 * the same retryable error; each retries with its own message id and the inbox answers a retry of
 * a commit that did land.
 */

import { GROUP_COMMIT_DEFAULTS, positiveInteger } from "../base/defaults.js";
import { StorageUnavailableError } from "../base/errors.js";
import { mapped } from "../base/mapped.js";

/** What one commit of a batch came to, in the order of the batch. */
export type BatchOutcome<R> =
  | { ok: R }
  | { error: unknown }
  /** Rolled back alone for a reason a fresh attempt can cure (a deadlock, an append race): queued again. */
  | { retry: unknown };

export interface GroupCommitOptions<C = never> {
  /** Most commits in one batch (default 256). */
  maxBatch?: number;
  /** Batches written at the same time (default 1: the next batch forms while one is in flight). */
  maxInFlight?: number;
  /**
   * How many batches the commits outstanding (queued and in flight) are spread over (default 1: a
   * batch takes everything queued, up to `maxBatch`). With 2, a burst of 50 leaves as two batches
   * of 25: while the store applies one, this process handles the other's answers and forms the
   * next, where with one batch of 50 the process and the store take turns and each waits for the
   * other. Only with `maxInFlight` above 1; outstanding commits fewer than `2 × minSplit` are
   * never split, since each batch has a fixed cost in the store.
   */
  spreadOver?: number;
  /** The smallest batch a split makes (default 8). */
  minSplit?: number;
  /**
   * What each item touches (a stream, an inbox key, an outbox id...). With more than one batch in
   * flight, an item sharing a key with an item of a batch in flight, or with an earlier item still
   * queued, waits for a later batch: items that share a key are applied in submit order, as with
   * one batch in flight, while items that share none overlap their round trips and fsyncs.
   */
  keysOf?: (item: C) => readonly string[];
  /** Times a commit answered `retry` is queued again before its error is returned (default 5). */
  maxRetries?: number;
  /**
   * When a batch may start: at once, or at the next turn of the event loop so that the commits
   * of every actor that ran in this turn join (both SQL journals defer: measured on PostgreSQL
   * with 50 actors, starting at once sent every other batch with a single commit, since the first
   * commit of a turn left before the others arrived).
   */
  start?: "now" | "next-turn";
}

/**
 * Batch sizes seen, for benchmarks and tests: the shape of batching (largest, sizes by bucket) on
 * one committer. The operator's view is the `oncely_group_commit_batch_size` histogram, fed by
 * `onBatch` (`observeJournal`) when a registry observes the journal; the committer itself has no
 * registry, so these are its only count, not a second one.
 */
export interface GroupCommitStats {
  batches: number;
  commits: number;
  largest: number;
  /** Batches by size bucket: 1, 2-3, 4-7, 8-15, ... (key is the bucket's lower bound). */
  sizes: Map<number, number>;
}

interface Queued<C, R> {
  item: C;
  retries: number;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class GroupCommitter<C, R> {
  readonly stats: GroupCommitStats = { batches: 0, commits: 0, largest: 0, sizes: new Map() };
  private readonly retryListeners = new Set<(reason: unknown) => void>();
  private queue: Queued<C, R>[] = [];
  private running = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly spreadOver: number;
  private readonly minSplit: number;
  /** Commits in the batches in flight. */
  private inFlightItems = 0;
  /**
   * The recent peak of commits outstanding (see `batchLimit`), in whole commits. Kept an integer on
   * purpose: a fraction here (as `peak * 0.95` made it) changed the field's representation in V8
   * after the code reading this object was optimized, and five or six functions of the commit path
   * (`nextBatch`, `release`, `commit` and callbacks) were deoptimized and compiled again in every
   * run's first thousand orders (counted with `--trace-deopt`), on the core the database needs.
   */
  private peak = 0;
  private readonly maxRetries: number;
  private readonly startNow: boolean;
  private readonly keysOf: ((item: C) => readonly string[]) | undefined;
  /** Keys of the items in flight, with how many in-flight items hold each. */
  private readonly busy = new Map<string, number>();
  private readonly batchListeners = new Set<(size: number, seconds: number) => void>();

  /**
   * `write` writes one batch and answers one outcome per item, in order. When it throws, every
   * commit of the batch fails with that error (for a lost connection: each is ambiguous).
   */
  constructor(
    private readonly write: (items: C[]) => Promise<BatchOutcome<R>[]> | BatchOutcome<R>[],
    options: GroupCommitOptions<C> = {},
  ) {
    this.maxBatch = positiveInteger("maxBatch", options.maxBatch ?? GROUP_COMMIT_DEFAULTS.maxBatch);
    this.maxInFlight = positiveInteger("maxInFlight", options.maxInFlight ?? GROUP_COMMIT_DEFAULTS.maxInFlight);
    const spreadOver = positiveInteger("spreadOver", options.spreadOver ?? GROUP_COMMIT_DEFAULTS.spreadOver);
    this.spreadOver = Math.min(spreadOver, this.maxInFlight);
    this.minSplit = positiveInteger("minSplit", options.minSplit ?? GROUP_COMMIT_DEFAULTS.minSplit);
    this.maxRetries = options.maxRetries ?? GROUP_COMMIT_DEFAULTS.maxRetries;
    this.startNow = (options.start ?? "now") === "now";
    // Keys matter only when batches can overlap; with one in flight, submit order is batch order.
    this.keysOf = this.maxInFlight > 1 ? options.keysOf : undefined;
  }

  /**
   * Called for each commit the store answered `retry` (a deadlock, a serialization failure, an
   * append race) as it is queued again, with the store's reason: retries are otherwise invisible,
   * and a steady rate of them is a defect worth seeing (see `observeJournal`).
   */
  onRetry(listener: (reason: unknown) => void): () => void {
    this.retryListeners.add(listener);
    return () => this.retryListeners.delete(listener);
  }

  /** Called after each batch is written (or failed), with its size and how long the write took. */
  onBatch(listener: (size: number, seconds: number) => void): () => void {
    this.batchListeners.add(listener);
    return () => this.batchListeners.delete(listener);
  }

  submit(item: C): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, retries: 0, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.startNow) {
      this.startBatches();
      return;
    }
    if (this.scheduled || this.running >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startBatches();
    });
  }

  private startBatches(): void {
    while (this.running < this.maxInFlight && this.queue.length > 0) {
      const limit = this.batchLimit();
      if (!this.mayStart(limit)) return;
      const { batch, keys } = this.nextBatch(limit);
      if (batch.length === 0) return; // every queued item waits for a key in flight
      this.running++;
      this.inFlightItems += batch.length;
      void this.run(batch).finally(() => {
        this.release(keys);
        this.running--;
        this.inFlightItems -= batch.length;
        if (this.queue.length > 0) this.pump();
      });
    }
  }

  /**
   * How many commits the next batch may take: `maxBatch`, or its share of the recent peak of
   * commits outstanding (`spreadOver`). The peak, not the count now: the answers of one batch reach
   * the queue over a few turns, and a share of what is outstanding at the first of them would split
   * the burst into ever smaller batches. The peak decays by a twentieth a batch (rounded up to a
   * whole commit), so a lighter load is split less within some tens of batches.
   */
  private batchLimit(): number {
    if (this.spreadOver === 1) return this.maxBatch;
    const peak = Math.max(this.queue.length + this.inFlightItems, this.peak);
    if (peak < 2 * this.minSplit) return this.maxBatch;
    return Math.min(this.maxBatch, Math.ceil(peak / this.spreadOver));
  }

  /**
   * Whether a batch of at most `limit` may start now, beside those in flight. While a burst is
   * split (its share is below `maxBatch`), at most `spreadOver` batches are in flight and one
   * leaves beside another only once it holds its share; otherwise any free slot takes what waits.
   */
  private mayStart(limit: number): boolean {
    if (this.running === 0 || limit === this.maxBatch) return true;
    return this.running < this.spreadOver && this.queue.length >= limit;
  }

  /** The next batch: the oldest items, skipping (and keeping in order) those whose keys are busy. */
  private nextBatch(limit: number): { batch: Queued<C, R>[]; keys: string[] } {
    const keysOf = this.keysOf;
    this.peak = Math.max(this.queue.length + this.inFlightItems, this.peak - Math.ceil(this.peak / 20));
    if (!keysOf) return { batch: this.queue.splice(0, limit), keys: [] };
    const batch: Queued<C, R>[] = [];
    const held: Queued<C, R>[] = [];
    const heldKeys = new Set<string>();
    const taken: string[] = [];
    for (const q of this.queue) {
      const keys = batch.length < limit ? keysOf(q.item) : undefined;
      if (keys === undefined || keys.some((k) => this.busy.has(k) || heldKeys.has(k))) {
        held.push(q);
        for (const k of keys ?? []) heldKeys.add(k);
        continue;
      }
      batch.push(q);
      taken.push(...keys);
    }
    this.queue = held;
    for (const k of taken) this.busy.set(k, (this.busy.get(k) ?? 0) + 1);
    return { batch, keys: taken };
  }

  private release(keys: string[]): void {
    for (const k of keys) {
      const n = (this.busy.get(k) ?? 1) - 1;
      if (n === 0) this.busy.delete(k);
      else this.busy.set(k, n);
    }
  }

  private async run(batch: Queued<C, R>[]): Promise<void> {
    this.record(batch.length);
    // A measurement only (no decision reads it), so the monotonic clock, not the injected one.
    const started = this.batchListeners.size > 0 ? performance.now() : 0;
    let outcomes: BatchOutcome<R>[];
    try {
      outcomes = await this.write(mapped(batch, (q) => q.item));
    } catch (error) {
      this.timed(batch.length, started);
      for (const q of batch) q.reject(error);
      return;
    }
    this.timed(batch.length, started);
    const again: Queued<C, R>[] = [];
    batch.forEach((q, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined) q.reject(new Error("group commit: the store answered fewer results than commits"));
      else if ("ok" in outcome) q.resolve(outcome.ok);
      else if ("error" in outcome) q.reject(outcome.error);
      else if (q.retries < this.maxRetries) {
        again.push({ ...q, retries: q.retries + 1 });
        this.retried(outcome.retry);
      } else q.reject(outcome.retry);
    });
    // Ahead of newer commits: a retried commit does not lose its place behind later arrivals.
    if (again.length > 0) this.queue.unshift(...again);
  }

  private retried(reason: unknown): void {
    for (const listener of this.retryListeners) {
      try {
        listener(reason);
      } catch {
        // A listener's failure is its own; the commit is queued again regardless.
      }
    }
  }

  private timed(size: number, started: number): void {
    if (this.batchListeners.size === 0) return;
    const seconds = (performance.now() - started) / 1000;
    for (const listener of this.batchListeners) listener(size, seconds);
  }

  private record(size: number): void {
    this.stats.batches++;
    this.stats.commits += size;
    this.stats.largest = Math.max(this.stats.largest, size);
    const bucket = 2 ** Math.floor(Math.log2(size));
    this.stats.sizes.set(bucket, (this.stats.sizes.get(bucket) ?? 0) + 1);
  }
}

/**
 * A batch written whole; when the store refuses it as a whole (one item's data it cannot hold
 * fails the one statement), written again one item at a time, in order, so that each item keeps
 * its own fate: only the refused one fails. An ambiguous failure (`StorageUnavailableError`: a
 * connection lost during the call) is every item's, not retried here: each caller gets it.
 */
export async function wholeOrEachAlone<C, R>(
  items: C[],
  whole: (items: C[]) => Promise<R[]>,
  alone: (item: C) => Promise<R>,
): Promise<BatchOutcome<R>[]> {
  try {
    return (await whole(items)).map((ok) => ({ ok }));
  } catch (error) {
    if (items.length === 1 || error instanceof StorageUnavailableError) throw error;
  }
  const outcomes: BatchOutcome<R>[] = [];
  for (const item of items) {
    try {
      outcomes.push({ ok: await alone(item) });
    } catch (error) {
      outcomes.push({ error });
    }
  }
  return outcomes;
}
