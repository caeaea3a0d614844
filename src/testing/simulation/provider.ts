import type {
  DefiniteResult,
  EffectHandler,
  EffectPolicy,
  LookupResult,
  RunContext,
  RunResult,
} from "../../effects/types.js";

/** One call that reached the provider and did its work. */
export interface Execution<I = unknown, R = unknown> {
  key: string;
  input: I;
  result: DefiniteResult<R>;
  /** False when the call did not come from an effect handler (e.g. from `evolve` during replay). */
  fromHandler: boolean;
  /** Whether the provider really performed the work (false: it returned a stored result for the key). */
  performed: boolean;
}

/** What the next call does, set by the simulator. */
export type ProviderFault = "fail" | "succeed-then-timeout";

export class ProviderTimeout extends Error {
  constructor(key: string) {
    super(`simulated timeout after the provider acted on ${key}`);
    this.name = "ProviderTimeout";
  }
}

export class ProviderUnavailable extends Error {
  constructor(key: string) {
    super(`simulated 503 before the provider acted on ${key}`);
    this.name = "ProviderUnavailable";
  }
}

export interface SimulatedProviderOptions<I, R> {
  /** The effect kind this provider serves. */
  kind: string;
  /** Dedups by idempotency key (returns the stored result for a key it has seen). */
  dedups: boolean;
  /** Offers lookup by key. */
  lookup: boolean;
  /** The provider's business answer for a new request (deterministic in the input). */
  execute(input: I, key: string, serial: number): DefiniteResult<R>;
  /**
   * A real handler's `run`, called instead of `execute` by the provider's handler (see
   * `SimulatedProvider.around`): the simulated faults, dedup and ledger then wrap real code.
   */
  run?: ((input: I, context: RunContext) => Promise<RunResult<R>>) | undefined;
  /** Policy for the handler this provider hands out. */
  policy?: Partial<EffectPolicy>;
}

/**
 * An in-process provider with a ledger, for simulation. It can dedup by key or not, offer lookup
 * or not, and fail the next call on the simulator's order. The ledger is what invariants audit:
 * the provider's own record of what it did, never the actor's belief.
 */
export class SimulatedProvider<I = unknown, R = unknown> {
  readonly kind: string;
  readonly executions: Execution<I, R>[] = [];
  private readonly byKey = new Map<string, Execution<I, R>>();
  private pendingFaults: ProviderFault[] = [];
  private handlerDepth = 0;
  private serial = 0;

  constructor(private readonly options: SimulatedProviderOptions<I, R>) {
    this.kind = options.kind;
  }

  /**
   * Simulated faults, dedup and a ledger around your real handler: the provider's handler calls
   * `handler.run` where a built-in provider would compute its answer, so the run tests your
   * handler's code (its input mapping, its result parsing, `notPerformed` answers) under the
   * simulator's crashes and provider faults. A `fail` fault throws before your handler runs; a
   * `succeed-then-timeout` throws after it returned. With `dedups`, a key seen before gets the
   * stored answer without calling it again. Lookup, when offered, answers from the ledger. Point
   * the handler at an in-process fake of the service (never a network call: runs must be
   * deterministic).
   */
  static around<I, R>(
    handler: EffectHandler<I, R>,
    options: { dedups: boolean; lookup?: boolean; policy?: Partial<EffectPolicy> },
  ): SimulatedProvider<I, R> {
    return new SimulatedProvider<I, R>({
      kind: handler.kind,
      dedups: options.dedups,
      lookup: options.lookup ?? false,
      // The world decides whether the provider dedups; the policy must say the same.
      policy: { ...handler.policy, ...options.policy, providerDedups: options.dedups },
      execute: () => {
        throw new Error(`provider "${handler.kind}" wraps a handler: it answers through run`);
      },
      run: (input, context) => handler.run(input, context),
    });
  }

  get dedups(): boolean {
    return this.options.dedups;
  }

  /** The next call fails this way. */
  injectFault(fault: ProviderFault): void {
    this.pendingFaults.push(fault);
  }

  clearFaults(): void {
    this.pendingFaults = [];
  }

  /** The provider's API: what a handler calls with the idempotency key. */
  call(key: string, input: I): DefiniteResult<R> {
    const fault = this.pendingFaults.shift();
    if (fault === "fail") throw new ProviderUnavailable(key);
    const fromHandler = this.handlerDepth > 0;
    const seen = this.options.dedups ? this.byKey.get(key) : undefined;
    let execution: Execution<I, R>;
    if (seen) {
      execution = { key, input, result: seen.result, fromHandler, performed: false };
    } else {
      const result = this.options.execute(input, key, ++this.serial);
      execution = { key, input, result, fromHandler, performed: true };
      this.byKey.set(key, execution);
    }
    this.executions.push(execution);
    if (fault === "succeed-then-timeout") throw new ProviderTimeout(key);
    return execution.result;
  }

  /** `call` for a provider around a real handler: the same faults, dedup and ledger, the answer from `run`. */
  private async callThrough(
    key: string,
    input: I,
    context: RunContext,
    run: NonNullable<SimulatedProviderOptions<I, R>["run"]>,
  ): Promise<RunResult<R>> {
    const fault = this.pendingFaults.shift();
    if (fault === "fail") throw new ProviderUnavailable(key);
    const fromHandler = this.handlerDepth > 0;
    const seen = this.options.dedups ? this.byKey.get(key) : undefined;
    let result: RunResult<R>;
    if (seen) {
      this.executions.push({ key, input, result: seen.result, fromHandler, performed: false });
      result = seen.result;
    } else {
      result = await run(input, { ...context, idempotencyKey: key });
      // "Not performed" is the handler's promise that nothing happened: nothing goes in the ledger.
      if (result.outcome !== "not-performed") {
        const execution = { key, input, result, fromHandler, performed: true };
        this.byKey.set(key, execution);
        this.executions.push(execution);
      }
    }
    if (fault === "succeed-then-timeout") throw new ProviderTimeout(key);
    return result;
  }

  /** Ask by key: the latest performed result, or not-found. */
  find(key: string): LookupResult<R> {
    const performed = this.byKey.get(key);
    return performed ? performed.result : { outcome: "not-found" };
  }

  /** Executions that really did the work for `key` (two or more means the effect happened twice). */
  performedFor(key: string): Execution<I, R>[] {
    return this.executions.filter((e) => e.key === key && e.performed);
  }

  /**
   * An effect handler backed by this provider. `keyOf` lets a test break the key on purpose
   * (e.g. append the attempt number) to prove the simulator catches it.
   */
  handler(options: { keyOf?: (key: string, attempt: number) => string } = {}): EffectHandler<I, R> {
    const keyOf = options.keyOf ?? ((key: string) => key);
    const handler: EffectHandler<I, R> = {
      kind: this.kind,
      policy: { providerDedups: this.options.dedups, ...this.options.policy },
      run: async (input, context) => {
        this.handlerDepth++;
        try {
          const key = keyOf(context.idempotencyKey, context.attempt);
          const run = this.options.run;
          return run ? await this.callThrough(key, input, context, run) : this.call(key, input);
        } finally {
          this.handlerDepth--;
        }
      },
    };
    if (this.options.lookup) handler.lookup = async (key) => this.find(key);
    return handler;
  }
}
