import type { DefiniteResult, EffectHandler, EffectPolicy, LookupResult } from "../../effects/types.js";

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
          return this.call(keyOf(context.idempotencyKey, context.attempt), input);
        } finally {
          this.handlerDepth--;
        }
      },
    };
    if (this.options.lookup) handler.lookup = async (key) => this.find(key);
    return handler;
  }
}
