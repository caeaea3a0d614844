/**
 * Every error oncely throws says what happened and whether trying again can help.
 * `retryable` errors may succeed on a later attempt (a conflict, a lost connection);
 * terminal ones never will (bad input, a rule of the domain). No transport codes in here:
 * the HTTP layer maps these to statuses.
 */
export abstract class OncelyError extends Error {
  abstract readonly retryable: boolean;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Trying again with fresh state can succeed. */
export class RetryableError extends OncelyError {
  readonly retryable = true;
  /** Suggested wait before the next attempt, in ms. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** Trying again cannot help. */
export class TerminalError extends OncelyError {
  readonly retryable = false;
}

/** Another writer appended to the stream first. Reload and decide again. */
export class VersionConflictError extends RetryableError {
  constructor(
    readonly stream: string,
    readonly expectedVersion: number,
    readonly actualVersion: number | undefined,
  ) {
    super(
      `version conflict on stream "${stream}": expected version ${expectedVersion}` +
        (actualVersion === undefined ? "" : `, found ${actualVersion}`),
    );
  }
}

/** The (consumer, messageId) pair is already in the inbox: the message was handled before. */
export class DuplicateMessageError extends OncelyError {
  readonly retryable = false;
  constructor(
    readonly consumer: string,
    readonly messageId: string,
  ) {
    super(`message "${messageId}" was already handled by "${consumer}"`);
  }
}

/** A sequencing checkpoint moved under us (another consumer instance advanced it). */
export class CheckpointConflictError extends RetryableError {
  constructor(
    readonly consumer: string,
    readonly source: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`checkpoint conflict for "${consumer}" on "${source}": expected ${expected}, found ${actual}`);
  }
}

/** Input that does not fit the contract (a command, a message, a config value). */
export class InvalidInputError extends TerminalError {
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
  ) {
    super(issues.length ? `${message}: ${issues.join("; ")}` : message);
  }
}

/** A domain rule refused the command (e.g. "order already cancelled"). */
export class CommandRejectedError extends TerminalError {}

/**
 * An actor's `decide` returned nothing (undefined or not an object) for a command, usually a
 * missing `case` (an effect outcome it does not handle). Rejected, never retried: the same
 * code gives the same answer.
 */
export class NoDecisionError extends CommandRejectedError {
  constructor(
    readonly actorType: string,
    readonly address: string,
    readonly commandType: string,
  ) {
    super(
      `decide of actor "${actorType}" (${address}) returned no decision for command "${commandType}": ` +
        "return a Decision (e.g. { events: [] }) for every command, or throw CommandRejectedError to refuse it",
    );
  }
}

/**
 * An actor that declares its effects (`effects: [...]`) decided to request a kind it does not
 * declare. Refused before anything is committed, and never retried: the same code gives the same
 * answer (a terminal rejection for a caller, a dead row for an outcome, as `NoDecisionError`).
 */
export class UndeclaredEffectError extends CommandRejectedError {
  constructor(
    readonly actorType: string,
    readonly address: string,
    readonly kind: string,
    readonly declared: readonly string[],
  ) {
    super(
      `decide of actor "${actorType}" (${address}) requested effect kind "${kind}", which the actor does not declare ` +
        `(declared: ${declared.length > 0 ? declared.join(", ") : "none"}): add it to the actor's effects`,
    );
  }
}

/** Two requests used one idempotency key with different inputs. */
export class IdempotencyKeyReusedError extends TerminalError {
  constructor(
    readonly key: string,
    /** What differs, e.g. `requested by stream "order/2", held by "order/1"`. */
    readonly detail?: string,
  ) {
    super(`idempotency key "${key}" was already used with a different request${detail ? `: ${detail}` : ""}`);
  }
}

/** The same idempotency key is being worked on right now; ask again later. */
export class OperationInProgressError extends RetryableError {
  constructor(readonly key: string) {
    super(`operation "${key}" is in progress`);
  }
}

/** The store could not be reached or failed mid-call; the outcome of a write may be unknown. */
export class StorageUnavailableError extends RetryableError {}

/**
 * The store refused a value that no retry can make storable (NUL or an unpaired surrogate in
 * text, a number out of a column's range, text that is not valid JSON...). Back ends map their
 * own error codes to it, so the core can dead-letter such a message at once without knowing them.
 */
export class TerminalStorageError extends TerminalError {}

/**
 * A message contradicts one already handled: the same id with another content, or another id
 * at a sequence position already taken. Never a silent duplicate: the consumer dead-letters it
 * with reason `conflict` and counts it.
 */
export class MessageConflictError extends TerminalError {
  constructor(
    message: string,
    readonly kind: "payload" | "version",
    /** What was held before (hash, eventId, envelope), for the dead letter. */
    readonly held: unknown,
  ) {
    super(message);
  }
}

/**
 * A sequenced consumer has no handler for an event (its projection gives no key, its router no
 * command): the event must not take its version silently; it is dead-lettered and the sequence holds.
 */
export class UnhandledEventError extends TerminalError {}

/** No actor type, effect handler or consumer is registered under a name. */
export class NotRegisteredError extends TerminalError {}

/** A command sent to a runtime after `close()` (a stopped host's): it handles none any more. */
export class RuntimeClosedError extends TerminalError {}

/** A journal used before `migrate()` created its tables (or its commit function). */
export class NotMigratedError extends TerminalError {
  constructor(backEnd: string, detail: string, options?: { cause?: unknown }) {
    super(
      `the ${backEnd} journal's tables are missing (${detail}): call journal.migrate() once before using it`,
      options,
    );
  }
}

/** Gave up after a bounded number of retries of a retryable failure. */
export class RetriesExhaustedError extends TerminalError {
  constructor(
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A command reached a worker that does not own its actor's slice (see `Ownership`): refused before
 * anything was read, so nothing changed. Send it to the slice's owner (a router forwards it), or
 * try again here after the slices settle: another worker may be taking the slice over right now.
 */
export class NotOwnerError extends RetryableError {
  constructor(
    readonly address: string,
    readonly slice: number,
  ) {
    super(`this worker does not own slice ${slice} of actor "${address}": route the command to the slice's owner`);
  }
}

/**
 * A commit made under a fencing token that is no longer its slice's: another worker took the slice
 * (this one stalled past its lease, or lost it in a partition). Nothing of the commit was written,
 * whatever its stream version said; this worker dropped the slice. Route the command to the new owner.
 */
export class FencedOutError extends RetryableError {
  constructor(
    readonly address: string,
    readonly slice: number,
    readonly token: number,
    readonly current: number,
  ) {
    super(
      `commit for actor "${address}" was fenced out: slice ${slice} is held under token ${current}, ` +
        `this worker held it under ${token}; route the command to the slice's owner`,
    );
  }
}

/** A named fault point armed by a test fired. Never thrown unless a test arms it. */
export class InjectedFault extends Error {
  constructor(readonly point: string) {
    super(`injected fault at ${point}`);
    this.name = "InjectedFault";
  }
}

/** Turn anything thrown into an Error, once, in one place. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === "string") return new Error(thrown);
  try {
    return new Error(`non-error thrown: ${JSON.stringify(thrown)}`);
  } catch {
    return new Error(`non-error thrown: ${String(thrown)}`);
  }
}

/** Whether retrying can help. Unknown errors count as retryable: they are usually I/O. */
export function isRetryable(thrown: unknown): boolean {
  if (thrown instanceof OncelyError) return thrown.retryable;
  return !(thrown instanceof TypeError || thrown instanceof RangeError || thrown instanceof SyntaxError);
}

/**
 * A parked version released after the message that filled its gap failed with a retryable error:
 * the filling message was applied; the released one is tried again later (the delivery that
 * released it is redelivered, or the next gap check releases it) until it is dead-lettered.
 */
export class ReleaseFailedError extends RetryableError {
  constructor(
    readonly consumer: string,
    readonly source: string,
    readonly version: number,
    cause: unknown,
  ) {
    super(
      `consumer "${consumer}": version ${version} of ${source}, released from parking, failed: ${toError(cause).message}`,
      { cause },
    );
  }
}
