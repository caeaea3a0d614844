import { IdempotencyKeyReusedError, InvalidInputError } from "../base/errors.js";
import { type Parser, parseWith, type SchemaLike } from "../base/standard-schema.js";

export type { Parser, SchemaLike };

import type { EffectRequest, EffectType } from "../core/decider.js";
import type { DefiniteResult, EffectPolicy, LookupResult, MatchedLookup, RunContext, RunResult } from "./types.js";

/** What a lookup gets: the call's abort signal and the input the effect was requested with. */
export interface LookupContext<I> {
  signal: AbortSignal;
  input: I;
}

/**
 * Ask the provider what happened to a key, and say whether what it found is this effect's: the
 * answer is `not-found`, or `found` with `matches` (compare the record with `context.input`).
 * `lookupMatching({ find, matches, outcome })` writes it.
 */
export type EffectLookup<I, R> = (idempotencyKey: string, context: LookupContext<I>) => Promise<MatchedLookup<R>>;

/** What `run`, `lookup` and `policy` are for one effect. */
export interface EffectImplementation<I, R> {
  run(input: I, context: RunContext): Promise<RunResult<R>>;
  lookup?: EffectLookup<I, R>;
  policy?: Partial<EffectPolicy>;
}

/**
 * The lookup of a declared effect, in three parts so that the comparison cannot be skipped:
 * `find` the provider's record by key (`undefined` or `null` when it has none), decide whether it
 * `matches` the effect's input (same customer, same amount: a record under the key that is another
 * request's is never this effect's outcome), and read its `outcome`.
 *
 * @example
 * lookup: lookupMatching({
 *   find: (key, { signal }) => bank.findCharge(key, { signal }),
 *   matches: (charge, input) => charge.customer === input.customer && charge.amount === input.amount,
 *   outcome: (charge) => (charge.status === "paid" ? succeeded({ chargeId: charge.id }) : failed(charge.reason)),
 * }),
 */
export function lookupMatching<I, R, F>(parts: {
  find(idempotencyKey: string, context: LookupContext<I>): Promise<F | null | undefined>;
  matches(found: F, input: I): boolean;
  outcome(found: F): DefiniteResult<R>;
}): EffectLookup<I, R> {
  return async (key, context) => {
    const found = await parts.find(key, context);
    if (found === undefined || found === null) return { outcome: "not-found" };
    if (!parts.matches(found, context.input)) {
      return {
        outcome: "found",
        matches: false,
        differs: `the provider's record ${brief(found)} is not for this effect's input ${brief(context.input)}`,
      };
    }
    return { outcome: "found", matches: true, answer: parts.outcome(found) };
  };
}

const brief = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
};

/**
 * The lookup as the dispatcher calls it. A record for another input throws
 * `IdempotencyKeyReusedError` naming what differs: ambiguous, so the effect stays Unknown and,
 * once its lookups are spent, goes to the reconciliation queue with that reason; it never
 * completes. An answer that did not say whether it matches is refused the same way.
 */
function dispatchedLookup<I, R>(
  kind: string,
  lookup: EffectLookup<I, R>,
): (idempotencyKey: string, context: LookupContext<I>) => Promise<LookupResult<R>> {
  return async (key, context) => {
    const answer: MatchedLookup<R> = await lookup(key, context);
    if (answer.outcome === "not-found") return answer;
    if (answer.outcome === "found" && answer.matches === true) return answer.answer;
    if (answer.outcome === "found" && answer.matches === false) {
      throw new IdempotencyKeyReusedError(
        key,
        `lookup of effect "${kind}" found a record for another input: ${answer.differs}`,
      );
    }
    throw new InvalidInputError(
      `lookup of effect "${kind}" answered ${brief(answer)} for "${key}" without comparing it with the effect's input`,
      [
        'answer { outcome: "found", matches, answer } or { outcome: "not-found" }; lookupMatching({ find, matches, outcome }) writes it',
      ],
    );
  };
}

export interface EffectSpec<K extends string, I, R> {
  /** Which handler runs it; also what `decide` switches on in the outcome (`command.kind`). */
  kind: K;
  /** Checked by the dispatcher on the stored input before every run and lookup, never by `request`. */
  input?: Parser<I>;
  /** Checked on every result (run, lookup, operator) before it reaches the owner. */
  result?: Parser<R>;
}

/** A declared effect: `decide` requests it, the owner receives its outcomes typed by kind. */
export interface DeclaredEffect<K extends string, I, R> extends EffectType<K, I, R> {
  readonly kind: K;
  /** Data, not an action: `decide` returns it and stays pure. */
  request(key: string, input: I, options?: { notBefore?: number }): EffectRequest<K, I>;
  /** The stored input, checked against `input`; throws `InvalidInputError` naming the kind and the path. */
  parseInput(raw: unknown): I;
  /** A result, checked against `result`; throws `InvalidInputError` naming the kind and the path. */
  parseResult(raw: unknown): R;
  /** This effect with its handler: where `run` needs what only a process has (a URL, a client). */
  implement(implementation: EffectImplementation<I, R>): Effect<K, I, R>;
}

/**
 * A declared effect with its handler: give it to a `Dispatcher` (`handlers: [payment, receipt]`).
 * Its `lookup` is the dispatcher's side of the declared one: the answer for this effect's input.
 */
export interface Effect<K extends string, I, R> extends DeclaredEffect<K, I, R> {
  readonly kind: K;
  run(input: I, context: RunContext): Promise<RunResult<R>>;
  lookup?(idempotencyKey: string, context: LookupContext<I>): Promise<LookupResult<R>>;
  policy?: Partial<EffectPolicy>;
}

/**
 * Declare an effect once, for both sides: `decide` builds its requests with `payment.request(key,
 * input)` (typed data), the dispatcher runs it (`handlers: [payment]`), and its outcomes reach the
 * owner typed (`OutcomeOf<typeof payment>`: `input: I` on every outcome, `result: R` on success).
 *
 * Let `kind` be inferred (no type arguments: I and R come from the schemas or from `run`) to
 * switch on `command.kind`; `defineEffect<I, R>(...)` types input and result with `kind: string`.
 *
 * @example
 * const payment = defineEffect({
 *   kind: "payment",
 *   input: z.object({ amount: z.number().int().positive() }),
 *   run: async (input, { idempotencyKey }) => succeeded(await bank.charge(input.amount, idempotencyKey)),
 * });
 * // decide: return { events, effects: [payment.request(`checkout:${id}:payment`, { amount })] };
 */
export function defineEffect<I = unknown, R = unknown, const K extends string = string>(
  spec: EffectSpec<K, I, R> & EffectImplementation<I, R>,
): Effect<K, I, R>;
export function defineEffect<I = unknown, R = unknown, const K extends string = string>(
  spec: EffectSpec<K, I, R>,
): DeclaredEffect<K, I, R>;
export function defineEffect<I, R, K extends string>(
  spec: EffectSpec<K, I, R> & Partial<EffectImplementation<I, R>>,
): DeclaredEffect<K, I, R> {
  if (typeof spec.kind !== "string" || spec.kind === "") {
    throw new InvalidInputError("defineEffect needs a kind (a non-empty string)");
  }
  const { kind, input, result } = spec;
  const declared: DeclaredEffect<K, I, R> = {
    kind,
    request: (key, value, options = {}) => ({
      kind,
      key,
      input: value,
      ...(options.notBefore === undefined ? {} : { notBefore: options.notBefore }),
    }),
    parseInput: (raw) => parseWith(input, raw, `input of effect "${kind}"`),
    parseResult: (raw) => parseWith(result, raw, `result of effect "${kind}"`),
    implement: (implementation) => ({
      ...declared,
      run: implementation.run,
      ...(implementation.lookup ? { lookup: dispatchedLookup(kind, implementation.lookup) } : {}),
      ...(implementation.policy ? { policy: implementation.policy } : {}),
    }),
  };
  return spec.run ? declared.implement({ ...spec, run: spec.run }) : declared;
}
