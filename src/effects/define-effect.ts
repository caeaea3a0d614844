import { InvalidInputError } from "../base/errors.js";
import type { EffectRequest, EffectType } from "../core/decider.js";
import type { EffectPolicy, LookupResult, RunContext, RunResult } from "./types.js";

/**
 * A schema that validates synchronously, as Standard Schema describes it (zod 3.24+ and 4,
 * valibot, arktype implement it), so oncely needs no schema library's types.
 */
export interface SchemaLike<T> {
  readonly "~standard": {
    validate(value: unknown): SchemaResult<T> | Promise<SchemaResult<T>>;
    readonly types?: { readonly input: unknown; readonly output: T } | undefined;
  };
}
type PathSegment = PropertyKey | { readonly key: PropertyKey };
type SchemaResult<T> =
  | { readonly value: T; readonly issues?: undefined }
  | { readonly issues: readonly { readonly message: string; readonly path?: readonly PathSegment[] | undefined }[] };

/** How a declared effect reads its input or result: a schema, or a function that returns it or throws. */
export type Parser<T> = SchemaLike<T> | ((raw: unknown) => T);

/** What `run`, `lookup` and `policy` are for one effect (the `EffectHandler` fields, typed). */
export interface EffectImplementation<I, R> {
  run(input: I, context: RunContext): Promise<RunResult<R>>;
  lookup?(idempotencyKey: string, context: { signal: AbortSignal; input: I }): Promise<LookupResult<R>>;
  policy?: Partial<EffectPolicy>;
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

/** A declared effect with its handler: give it to a `Dispatcher` (`handlers: [payment, receipt]`). */
export interface Effect<K extends string, I, R> extends DeclaredEffect<K, I, R>, EffectImplementation<I, R> {
  readonly kind: K;
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
      ...(implementation.lookup ? { lookup: implementation.lookup } : {}),
      ...(implementation.policy ? { policy: implementation.policy } : {}),
    }),
  };
  return spec.run ? declared.implement({ ...spec, run: spec.run }) : declared;
}

function parseWith<T>(parser: Parser<T> | undefined, raw: unknown, what: string): T {
  if (parser === undefined) return raw as T;
  if (typeof parser === "function") {
    try {
      return parser(raw);
    } catch (error) {
      throw new InvalidInputError(`invalid ${what}`, [error instanceof Error ? error.message : String(error)]);
    }
  }
  const checked = parser["~standard"].validate(raw);
  if (checked instanceof Promise) throw new InvalidInputError(`the schema of the ${what} must validate synchronously`);
  if (!checked.issues) return checked.value;
  throw new InvalidInputError(
    `invalid ${what}`,
    checked.issues.map((issue) => `${pathText(issue.path)}: ${issue.message}`),
  );
}

const pathText = (path: readonly PathSegment[] | undefined): string =>
  path?.length ? path.map((s) => String(typeof s === "object" ? s.key : s)).join(".") : "(root)";
