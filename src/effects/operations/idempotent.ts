import { requestHash } from "../../base/canonical-json.js";
import { OPERATIONS_DEFAULTS } from "../../base/defaults.js";
import { IdempotencyKeyReusedError, InvalidInputError, OperationInProgressError } from "../../base/errors.js";
import type { Clock, IdGenerator } from "../../core/clock.js";
import { resolveEnvironment } from "../../core/environment.js";
import type { Logger } from "../../core/logger.js";
import type { OperationOutcome, OperationStore } from "./types.js";

export interface IdempotentOperationsOptions {
  store: OperationStore;
  /**
   * A `processing` row older than this is presumed abandoned (its performer crashed) and may be
   * taken over by the next request with the same key and request. Default 5 minutes.
   *
   * Failure window: a performer still working after `staleAfterMs` can be overtaken, and then
   * the work runs twice. Choose it longer than the slowest work (plus clock skew between your
   * service's instances); the fencing token makes sure only one outcome is ever stored.
   */
  staleAfterMs?: number;
  clock?: Clock;
  /** Fencing tokens. */
  ids?: IdGenerator;
  logger?: Logger;
}

export interface PerformResult<R> {
  outcome: OperationOutcome<R>;
  /** True when the stored outcome of an earlier request was returned and no work ran. */
  replayed: boolean;
  /**
   * True when this call's work ran but a takeover had replaced it meanwhile (the window above);
   * `outcome` is then the stored one, not this call's.
   */
  superseded: boolean;
}

/**
 * The provider side of an idempotency key:
 * - the first request inserts `processing` and performs the work; its outcome is stored;
 * - a later request with the key and an equal request (by canonical hash) gets the stored outcome;
 * - a different request with the same key throws `IdempotencyKeyReusedError` (terminal);
 * - while the first request still works, others get `OperationInProgressError` (retryable), never a second run;
 * - a `processing` row older than `staleAfterMs` is taken over by the next request (its performer crashed).
 *
 * If the work throws, the row stays `processing` (the work may have had effects we cannot see)
 * and a retry after `staleAfterMs` takes over; pass `releaseOnThrow` for work that is all-or-nothing.
 *
 * @example
 * const ops = new IdempotentOperations({ store: memoryOperationStore() });
 * const { outcome } = await ops.perform(key, { orderId, amount }, async () => succeeded(await bank.charge(amount)));
 */
export class IdempotentOperations {
  readonly staleAfterMs: number;
  private readonly store: OperationStore;
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly logger: Logger;

  constructor(options: IdempotentOperationsOptions) {
    this.store = options.store;
    this.staleAfterMs = options.staleAfterMs ?? OPERATIONS_DEFAULTS.staleAfterMs;
    if (!Number.isFinite(this.staleAfterMs) || this.staleAfterMs <= 0) {
      throw new InvalidInputError(`staleAfterMs must be a positive number of ms, got ${this.staleAfterMs}`);
    }
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.ids = env.ids;
    this.logger = env.logger;
  }

  async perform<R>(
    key: string,
    request: unknown,
    work: (context: { attempt: number; takeover: boolean }) => Promise<OperationOutcome<R>>,
    options: { releaseOnThrow?: boolean } = {},
  ): Promise<PerformResult<R>> {
    if (!key) throw new InvalidInputError("an operation key is required");
    const hash = requestHash(request);
    const token = this.ids.next();
    const now = this.clock.now();
    if (await this.store.insertIfAbsent({ key, requestHash: hash, token, startedAt: now })) {
      return this.execute(key, token, 1, false, work, options);
    }
    const record = await this.store.get(key);
    if (!record) {
      // Released or pruned between our insert and read: one more insert, else someone else won.
      if (await this.store.insertIfAbsent({ key, requestHash: hash, token, startedAt: now })) {
        return this.execute(key, token, 1, false, work, options);
      }
      throw new OperationInProgressError(key);
    }
    if (record.requestHash !== hash) throw new IdempotencyKeyReusedError(key);
    if (record.status === "done" && record.outcome) {
      return { outcome: record.outcome as OperationOutcome<R>, replayed: true, superseded: false };
    }
    if (now - record.startedAt < this.staleAfterMs) throw new OperationInProgressError(key);
    if (!(await this.store.takeOver(key, record.token, token, now))) throw new OperationInProgressError(key);
    this.logger.warn({ key, staleSince: record.startedAt, attempt: record.attempt + 1 }, "took over a stale operation");
    return this.execute(key, token, record.attempt + 1, true, work, options);
  }

  /** Read the stored record of a key (a provider's `lookup`). */
  get(key: string) {
    return this.store.get(key);
  }

  /** Delete outcomes completed before `before`. Keep them at least as long as clients may retry a key. */
  prune(before: number): Promise<number> {
    return this.store.prune(before);
  }

  private async execute<R>(
    key: string,
    token: string,
    attempt: number,
    takeover: boolean,
    work: (context: { attempt: number; takeover: boolean }) => Promise<OperationOutcome<R>>,
    options: { releaseOnThrow?: boolean },
  ): Promise<PerformResult<R>> {
    let outcome: OperationOutcome<R>;
    try {
      outcome = await work({ attempt, takeover });
    } catch (error) {
      if (options.releaseOnThrow) await this.store.release(key, token);
      throw error;
    }
    if (await this.store.complete(key, token, outcome, this.clock.now())) {
      return { outcome, replayed: false, superseded: false };
    }
    const record = await this.store.get(key);
    this.logger.error({ key, attempt }, "operation was taken over while its work ran: the work ran twice");
    if (record?.status === "done" && record.outcome) {
      return { outcome: record.outcome as OperationOutcome<R>, replayed: false, superseded: true };
    }
    return { outcome, replayed: false, superseded: true };
  }
}
