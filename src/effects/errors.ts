import { RetryableError, TerminalError } from "../base/errors.js";

/** No effect (outbox row of category `effect`) exists under a key. */
export class EffectNotFoundError extends TerminalError {
  constructor(readonly key: string) {
    super(`no effect with key "${key}"`);
  }
}

/** An operator tried to settle an effect that is not waiting for one (still running, or already final). */
export class EffectNotSettleableError extends TerminalError {
  constructor(
    readonly key: string,
    readonly status: string,
  ) {
    super(
      `effect "${key}" cannot be settled: its outbox status is "${status}" ` +
        `(only "reconcile" or "resolving" effects, whose outcome is Unknown, can be settled)`,
    );
  }
}

/** An operator asked to run again an effect that is not waiting after exhausted retries. */
export class EffectNotRetryableError extends TerminalError {
  constructor(
    readonly key: string,
    readonly status: string,
  ) {
    super(
      `effect "${key}" cannot be retried: only an effect in the reconciliation queue because its retries ` +
        `were exhausted (every run answered "not performed") can; its outbox status is "${status}" ` +
        `(an Unknown effect may have acted: settle it instead)`,
    );
  }
}

/** A handler call (`run` or `lookup`) exceeded its policy's timeoutMs. Ambiguous: the provider may have acted. */
export class EffectTimeoutError extends RetryableError {
  constructor(readonly timeoutMs: number) {
    super(`effect handler did not answer within ${timeoutMs} ms`);
  }
}
