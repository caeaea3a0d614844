// biome-ignore-all assist/source/organizeImports: the order is the documentation (by whether retrying helps)
/**
 * Every error class oncely's root entry throws, under one namespace: `import { errors } from "oncely"`,
 * then `error instanceof errors.VersionConflictError`. Each says whether retrying can help, and so
 * does its `retryable` field at run time (`isRetryable(e)` reads it, and counts a foreign error as
 * retryable unless it is a TypeError, RangeError or SyntaxError). The four met most
 * (`CommandRejectedError`, `InvalidInputError`, `RetryableError`, `TerminalError`) are also exported
 * from the root by name.
 *
 * Not here: `NatsSetupError` (`oncely/nats`), the console's `ConsoleHttpError` (`oncely/console`),
 * and the fault tooling's `InjectedFault` and `StoreFault` (`oncely/testing`).
 */

// The bases. `retryable` is true for every RetryableError, false for every TerminalError.
export {
  /** The base of them all: `retryable` says whether another attempt can succeed. */
  OncelyError,
  /** Retrying helps: another attempt with fresh state can succeed (`retryAfterMs` suggests a wait). */
  RetryableError,
  /** Retrying does not help: the same input gives the same answer. */
  TerminalError,
  isRetryable,
} from "./base/errors.js";

// Retrying helps (each extends RetryableError).
export {
  /** Retrying helps, after `stream`'s newer events are read: another writer appended first (the runtime retries it). */
  VersionConflictError,
  /** Retrying helps: a sequencing checkpoint moved under this consumer (another instance advanced it). */
  CheckpointConflictError,
  /** Retrying helps, later: the same idempotency key is being worked on right now. */
  OperationInProgressError,
  /** Retrying helps: the store could not be reached or failed mid-call; a write's outcome may be unknown. */
  StorageUnavailableError,
  /** Retrying helps, at the slice's owner or once the slices settle: this worker does not own the actor. */
  NotOwnerError,
  /** Retrying helps, at the new owner: another worker took the slice; nothing of the commit was written. */
  FencedOutError,
  /** Retrying helps: a parked version released after its gap filled failed; it is tried again later. */
  ReleaseFailedError,
} from "./base/errors.js";
export {
  /** Retrying helps, but may repeat the call: a handler exceeded its timeout, and the provider may have acted. */
  EffectTimeoutError,
} from "./effects/errors.js";
export {
  /** Retrying (waiting again) helps: the awaited state may still come, the work is durable. */
  WaitTimeoutError,
} from "./host/errors.js";
export {
  /** Retrying with the same message id helps: the forward stays and runs once; the owner did not answer in time. */
  ForwardTimeoutError,
} from "./ownership/router.js";
export {
  /** Retrying helps, through the journal (the router does it itself): the owner's peer endpoint gave no answer. */
  PeerUnreachableError,
} from "./ownership/peer-link.js";
export {
  /** Retrying helps on a newer worker only: the value was written by newer code than this. */
  VersionTooNewError,
} from "./core/upcast.js";

// Retrying does not help (each extends TerminalError, but for the two marked).
export {
  /** Retrying does not help: a domain rule refused the command. */
  CommandRejectedError,
  /** Retrying does not help: `decide` returned no decision for the command (a missing `case`). */
  NoDecisionError,
  /** Retrying does not help: `decide` requested an effect kind the actor does not declare. */
  UndeclaredEffectError,
  /** Retrying does not help: input that does not fit the contract (`issues` says what is wrong). */
  InvalidInputError,
  /** Retrying does not help: one idempotency key was used with two different requests. */
  IdempotencyKeyReusedError,
  /** Retrying does not help (an OncelyError with `retryable: false`): the message was handled before. */
  DuplicateMessageError,
  /** Retrying does not help: a message contradicts one already handled; it is dead-lettered. */
  MessageConflictError,
  /** Retrying does not help: a sequenced consumer has no handler for the event; it is dead-lettered. */
  UnhandledEventError,
  /** Retrying does not help: no actor type, handler or consumer is registered under the name. */
  NotRegisteredError,
  /** Retrying does not help here: the runtime (a stopped host's) handles no command any more. */
  RuntimeClosedError,
  /** Retrying does not help until `journal.migrate()` ran: the journal's tables are missing. */
  NotMigratedError,
  /** Retrying does not help: the bounded retries of a retryable failure ran out (`attempts`). */
  RetriesExhaustedError,
  /** Retrying does not help: the store refused a value no retry makes storable (NUL in text...). */
  TerminalStorageError,
} from "./base/errors.js";
export {
  /** Retrying does not help: no effect exists under the key. */
  EffectNotFoundError,
  /** Retrying does not help: only an effect whose outcome is Unknown can be settled. */
  EffectNotSettleableError,
  /** Retrying does not help: only an effect parked after exhausted retries can be run again. */
  EffectNotRetryableError,
} from "./effects/errors.js";
export {
  /** Retrying does not help: the host stopped while the wait was in progress. */
  HostStoppedError,
} from "./host/errors.js";
export {
  /** Retrying does not help for this code: a stored value at a version it has no path from. */
  UpcastError,
} from "./core/upcast.js";
export {
  /** Retrying does not help: a message that could not be verified (no retry makes a forgery authentic). */
  AuthenticityError,
} from "./messaging/signing.js";
export {
  /** Retrying does not help: a fact was moved between two alternatives of one rank. */
  IllegalTransitionError,
} from "./messaging/facts.js";
export {
  /** Retrying does not help: another consumer, or a running rebuild, owns the collection. */
  CollectionOwnedError,
} from "./messaging/collection-owners.js";
export {
  /** Retrying does not help until the driver is installed (an OncelyError with `retryable: false`). */
  MissingDriverError,
} from "./core/require-driver.js";
