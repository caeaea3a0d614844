import type { UpcastStep } from "../core/upcast.js";

/**
 * The effect contract: what a handler is, what it may answer, and the policy the dispatcher
 * follows. Handlers talk to the outside world; everything else in oncely stays pure or local.
 */

/** Status of one effect key, as the owning actor and the cross-actor view see it. */
export type EffectStatus = "NotRequested" | "Pending" | "Completed" | "Failed" | "Unknown";

/** A definite answer from the provider: it acted (`succeeded`) or refused for good (`failed`). */
export type DefiniteResult<R = unknown> = { outcome: "succeeded"; result: R } | { outcome: "failed"; reason: string };

/**
 * The provider definitely did NOT act (a 429 or 503 answered before it did anything): run again
 * later with the same key, without going Unknown. Only a handler that knows nothing happened may
 * answer this; a timeout, a reset or a 5xx after the request was accepted is ambiguous (throw).
 */
export type NotPerformed = { outcome: "not-performed"; reason: string; retryAfterMs?: number | undefined };

/** What `run` may answer. */
export type RunResult<R = unknown> = DefiniteResult<R> | NotPerformed;

/** What a lookup by key found. `not-found` means the provider has no record of the key (yet). */
export type LookupResult<R = unknown> = DefiniteResult<R> | { outcome: "not-found" };

/**
 * What the lookup of a declared effect (`defineEffect({ lookup })`) answers: a record found under
 * the key counts only once it was compared with the effect's input. A provider keeps a record per
 * key, but the record under a key may be another request's: a key reused with another body (a 409),
 * another customer's charge. Only a record that `matches` is this effect's outcome; one that does
 * not never completes the effect: it stays Unknown and goes to the reconciliation queue with what
 * differs. `lookupMatching` writes this answer from a find, a comparison and a reading.
 */
export type MatchedLookup<R = unknown> =
  | { outcome: "not-found" }
  | { outcome: "found"; matches: true; answer: DefiniteResult<R> }
  | { outcome: "found"; matches: false; differs: string };

export const succeeded = <R>(result: R): DefiniteResult<R> => ({ outcome: "succeeded", result });
export const failed = (reason: string): DefiniteResult<never> => ({ outcome: "failed", reason });
export const notPerformed = (reason: string, options: { retryAfterMs?: number } = {}): NotPerformed => ({
  outcome: "not-performed",
  reason,
  ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }),
});
export const notFound = (): LookupResult<never> => ({ outcome: "not-found" });

export interface RunContext {
  /** The effect's stable key. Pass it to the provider as its idempotency key. */
  idempotencyKey: string;
  /** 1 for the first run of this key, 2 for the second... Never part of the key. */
  attempt: number;
  /** Aborted when the per-call timeout passes or the dispatcher stops. */
  signal: AbortSignal;
  kind: string;
  /** Address of the actor that asked for the effect. */
  owner: string;
}

/**
 * A handler for one effect kind. `run` returns `succeeded`/`failed` for definite answers and
 * `notPerformed` when the provider definitely did not act. Throwing oncely's `TerminalError`
 * means failed for good; throwing its `RetryableError` means not performed (retry later, same key).
 * Anything else it throws, and a timeout, is ambiguous: the provider may have acted.
 *
 * Failure window: between the provider's success and the commit of its outcome, a crash makes
 * a dispatcher call `run` again with the same key (or `lookup` it, per policy). Providers must
 * dedup by key, or offer `lookup`; otherwise ambiguous outcomes go to reconciliation.
 */
export interface EffectHandler<I = unknown, R = unknown> {
  kind: string;
  run(input: I, context: RunContext): Promise<RunResult<R>>;
  /** Ask the provider what happened to a key. Throwing counts as "still unknown". */
  lookup?(idempotencyKey: string, context: { signal: AbortSignal; input: I }): Promise<LookupResult<R>>;
  policy?: Partial<EffectPolicy>;
  /**
   * Checks the stored input before every `run` and `lookup` (a `defineEffect` with an `input`
   * schema sets it); throwing means the input cannot be read, so the effect is never run with it.
   */
  parseInput?(raw: unknown): I;
  /** Checks a result (from run, lookup or an operator) before the owner gets it; throwing rejects it. */
  parseResult?(raw: unknown): R;
  /** Version of the input shape `run` takes (default 1); rows store the version they were requested at. */
  inputVersion?: number;
  /**
   * `upcastInput[n]` turns an input of version n into version n + 1, for rows requested by older
   * code. A row with no path goes to the reconciliation queue instead of running (see `effect-input.ts`).
   */
  upcastInput?: Readonly<Record<number, UpcastStep>>;
  /**
   * Kinds this handler was called before a rename: rows requested by older code under those names
   * are run by it (their input through `upcastInput`; the outcome keeps the row's kind, the one
   * the requesting code knows). Never reuse a former kind for another action.
   */
  formerKinds?: readonly string[];
}

export interface Backoff {
  initialMs: number;
  maxMs: number;
  multiplier: number;
  /** 0..1: fraction of each delay that is randomized (from the injected Random). */
  jitter: number;
}

export interface EffectPolicy {
  /** Per call of `run` / `lookup`. */
  timeoutMs: number;
  /**
   * The provider deduplicates by idempotency key, so an ambiguous run may be retried with the
   * same key. When false, an ambiguous run is never retried blindly: the effect goes Unknown and
   * is resolved by `lookup` or by an operator.
   */
  providerDedups: boolean;
  /** Runs of one key before an ambiguous effect is declared Unknown (dedup providers). */
  maxAttempts: number;
  /** Delays between runs of one key (a not-performed answer, a same-key retry): exponential, capped at `maxMs`. */
  backoff: Backoff;
  /**
   * Not-performed answers (`notPerformed`, a thrown `RetryableError`) of one key before it stops
   * being retried and escalates to the reconciliation queue.
   */
  notPerformedMaxAttempts: number;
  /**
   * Time since a key's first not-performed answer after which it escalates instead of waiting for
   * another retry (checked when a retry would start later than that). `null`: no time budget.
   */
  notPerformedMaxAgeMs: number | null;
  /** Lookups of an Unknown effect before it goes to the reconciliation queue. */
  lookupAttempts: number;
  lookupBackoff: Backoff;
  /**
   * When lookup answers not-found at least this long after the last run started, the provider
   * cannot still be working on it, so running again with the same key is safe. `null`: never;
   * such effects go to reconciliation.
   */
  rerunAfterNotFoundMs: number | null;
  /** How long a claimed row stays leased to one dispatcher. Longer than `timeoutMs`. */
  leaseMs: number;
}

/** One effect as seen across actors (from the outbox). */
export interface EffectView {
  key: string;
  kind: string;
  owner: string;
  status: EffectStatus;
  /** True when the effect waits for an operator in the reconciliation queue. */
  needsReconciliation: boolean;
  attempts: number;
  result: unknown;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** An operator's decision about an effect in the reconciliation queue. */
export type Settlement =
  | { outcome: "succeeded"; result: unknown; by: string; note?: string }
  | { outcome: "failed"; reason: string; by: string; note?: string };
