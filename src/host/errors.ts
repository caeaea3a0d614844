import { RetryableError, TerminalError } from "../base/errors.js";

/**
 * A wait (`waitFor`, `waitForEffect`, `drain`) ran out of time. Retryable: the awaited state may
 * still come (the work is durable in the journal); waiting again is safe.
 */
export class WaitTimeoutError extends RetryableError {
  constructor(
    /** What was awaited: an address, an effect key, or `drain`. */
    readonly awaited: string,
    readonly timeoutMs: number,
    detail: string,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${awaited}: ${detail}`);
  }
}

/** The host stopped while a wait was in progress (or a wait began after `stop()`). */
export class HostStoppedError extends TerminalError {
  constructor(awaited: string) {
    super(`the host stopped while waiting for ${awaited}`);
  }
}
