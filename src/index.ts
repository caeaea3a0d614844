/**
 * oncely: non-idempotent side effects from event-sourced actors, requested at least once with one
 * stable key and recorded exactly once; integration events that arrive late, twice or out of
 * order, without ever rolling state back.
 *
 * Back ends come from subpaths (`oncely/sqlite`, `oncely/postgres`, `oncely/nats`), test tools
 * from `oncely/testing`. This entry point imports none of them statically, so it needs no driver;
 * `openJournal(url)` imports the one back end its URL names when called.
 */

export {
  CheckpointConflictError,
  CommandRejectedError,
  DuplicateMessageError,
  FencedOutError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  isRetryable,
  MessageConflictError,
  NoDecisionError,
  NotMigratedError,
  NotOwnerError,
  NotRegisteredError,
  OncelyError,
  OperationInProgressError,
  RetriesExhaustedError,
  RetryableError,
  RuntimeClosedError,
  StorageUnavailableError,
  TerminalError,
  TerminalStorageError,
  toError,
  UndeclaredEffectError,
  UnhandledEventError,
  VersionConflictError,
} from "./base/errors.js";
export { isStorableText, unstorableReason } from "./base/storable-text.js";
// The operator CLI as a program (a CLI of your own gives it your consumers, so dead letters can be replayed),
// and openJournal: the journal a URL names (postgres://…, sqlite:PATH, memory:), loading only that back end.
export type { CliConsumers } from "./cli/dead-letters.js";
export { createOncelyCli, type OncelyCliOptions, runOncelyCli } from "./cli/program.js";
// Actors and the runtime
export {
  type ActorDefinition,
  type AnyActor,
  defineActor,
  type EventSchemas,
  type OutcomesOf,
  type SnapshotPolicy,
} from "./core/actor.js";
export { type Address, formatAddress, parseAddress } from "./core/address.js";
export {
  type Clock,
  type IdGenerator,
  type Random,
  randomIds,
  seededRandom,
  sequentialIds,
  systemClock,
  systemRandom,
} from "./core/clock.js";
export type {
  DecideContext,
  Decider,
  Decision,
  EffectOutcome,
  EffectOutcomeOf,
  EffectRequest,
  EffectType,
  MessageOutcome,
  MessageRequest,
  OutcomeOf,
  PublishRequest,
  RoutedOutcome,
  TimerFired,
  Typed,
} from "./core/decider.js";
export {
  ArmableFaults,
  FAULT_POINTS,
  type FaultAction,
  type FaultPoint,
  type Faults,
  faultsFromEnv,
  noFaults,
} from "./core/faults.js";
export { type Logger, silentLogger } from "./core/logger.js";
export { readEvent } from "./core/recovery.js";
export { type DriverName, MissingDriverError } from "./core/require-driver.js";
export {
  createRuntime,
  Runtime,
  type RuntimeJournal,
  type RuntimeOptions,
  type SendOptions,
  type SendResult,
} from "./core/runtime.js";
export {
  DEFAULT_SLICE_COUNT,
  fenceCheckpoint,
  type Ownership,
  ownsEverything,
  SLICE_FENCE_CONSUMER,
  sliceOf,
  sliceOfAddress,
} from "./core/slices.js";
export { type SnapshotMetrics, snapshotMetrics } from "./core/snapshot-metrics.js";
export {
  type SchemaOf,
  type Schemas,
  UpcastError,
  type UpcastStep,
  upcast,
  VersionTooNewError,
} from "./core/upcast.js";
// Effects: handlers, dispatcher, Unknown resolution, reconciliation, provider-side idempotency
export * from "./effects/index.js";
// Sequential flows: a list of keyed steps as an ordinary actor
export {
  FailureBuilder,
  type FlowActor,
  FlowBuilder,
  type FlowEvent,
  type FlowOptions,
  type FlowState,
  type FlowStatus,
  flow,
} from "./flows/flow.js";
export type { FailureContext, PublishStep, StepContext } from "./flows/steps.js";
// The host: one process's runtime, dispatcher, relay and consumers from one description; awaiting results
export type { SettledEffect, WaitOptions } from "./host/await.js";
export { HostStoppedError, WaitTimeoutError } from "./host/errors.js";
export type { ActorHandle, CommandsOf, StateOf } from "./host/handles.js";
export { createHost, Host, type HostConsumer, type HostOptions, type HostOwnership } from "./host/host.js";
export {
  type ConsoleQueries,
  type ConsumerPositions,
  type DeadLetterMatch,
  type DeadLetterPageQuery,
  EFFECT_LIST_STATUSES,
  type EffectListStatus,
  MAX_PAGE,
  type OutboxPageQuery,
  type Page,
} from "./journal/console-queries.js";
export { openJournal } from "./journal/open.js";
// Whether an owner recorded a final outcome: its inbox row, or the done row it finished (InboxEntry.outcomeOf)
export { outboxSlice } from "./journal/outbox-slice.js";
export { outcomeRecorded } from "./journal/outcome-record.js";
export { PUBLISHED_READER_SOURCE } from "./journal/published.js";
// The journal contract (back ends implement it)
export type * from "./journal/types.js";
// Integration events: outbox relay, transports, consumers, sequencing, dead letters, projections
export * from "./messaging/index.js";
// Metrics and traces
export * from "./observability/index.js";
// Slice ownership: leases, fencing, rebalancing
export * from "./ownership/index.js";
export {
  CommandRouter,
  type CommandRouterOptions,
  ForwardTimeoutError,
  type RoutedResult,
} from "./ownership/router.js";
