// biome-ignore-all assist/source/organizeImports: the groups' order is the documentation (docs/guide/api-map.md)
/**
 * oncely: non-idempotent side effects from event-sourced actors, requested at least once with one
 * stable key and recorded exactly once; integration events that arrive late, twice or out of
 * order, without ever rolling state back.
 *
 * Every name this entry exports is listed below by name, in groups; test/package/surface.unit.test.ts
 * fails when one is added or removed without the list there. Elsewhere:
 * - back ends: `oncely/sqlite`, `oncely/postgres`, `oncely/nats` (this entry imports none of them
 *   statically, so it needs no driver; `openJournal(url)` imports the one its URL names when called);
 * - test tools and fault injection: `oncely/testing` (`oncely/testing/conformance` for back ends);
 * - the operator console: `oncely/console`;
 * - the parts the components are built from (envelope encoding, slices, metric sets, policy
 *   resolution, the console's queries...): `oncely/advanced`, for back ends and tools, with no promise
 *   that they keep their shape between minor versions.
 */

// ============================== Actors & decisions ==============================
// An actor: a decider (decide, evolve) over its own event stream; what it decides, as data.
export {
  defineActor,
  type ActorDefinition,
  type AnyActor,
  type EventSchemas,
  type OutcomesOf,
  type SnapshotPolicy,
} from "./core/actor.js";
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
export { type Address, formatAddress, parseAddress } from "./core/address.js";
// A timer: a deadline an actor sets in its decision, fired back to it as a command.
export { deadline, type DeadlineRequest } from "./effects/timer.js";
// Evolution: stored events, messages and effect inputs read at the version this code expects.
export { upcast, type SchemaOf, type Schemas, type UpcastStep } from "./core/upcast.js";
// Text every back end stores (no NUL, no unpaired surrogate), for validating input at the edge.
export { isStorableText, unstorableReason } from "./base/storable-text.js";
export { storableText } from "./messaging/envelope.js";
// Sequential flows: a list of keyed steps, as an ordinary actor.
export {
  flow,
  type FailureBuilder,
  type FlowActor,
  type FlowBuilder,
  type FlowEvent,
  type FlowOptions,
  type FlowState,
  type FlowStatus,
} from "./flows/flow.js";
export type { FailureContext, PublishStep, StepContext } from "./flows/steps.js";

// ==================================== Effects ====================================
// Declaring an effect, and the handler that performs it: run, lookup, and their results.
export {
  defineEffect,
  lookupMatching,
  type DeclaredEffect,
  type Effect,
  type EffectImplementation,
  type EffectLookup,
  type EffectSpec,
  type LookupContext,
  type Parser,
  type SchemaLike,
} from "./effects/define-effect.js";
export {
  failed,
  notFound,
  notPerformed,
  succeeded,
  type Backoff,
  type DefiniteResult,
  type EffectHandler,
  type EffectPolicy,
  type EffectStatus,
  type EffectView,
  type LookupResult,
  type MatchedLookup,
  type NotPerformed,
  type RunContext,
  type RunResult,
  type Settlement,
} from "./effects/types.js";
// An effect's status as an actor's state keeps it, and as the journal reports it.
export { effectStatusAfter, isFinalStatus } from "./effects/status.js";
export { effectView, getEffect, listEffects, type EffectFilter } from "./effects/view.js";
// The dispatcher runs requested effects; reconciliation settles the ones whose outcome is Unknown.
export { Dispatcher, type DispatcherJournal, type DispatcherOptions } from "./effects/dispatcher.js";
export type { CommandSink, DispatcherStats, MessageRetryPolicy } from "./effects/context.js";
export {
  Reconciliation,
  settlementSchema,
  type ReconciliationItem,
  type ReconciliationJournal,
  type Retry,
} from "./effects/reconciliation.js";
// Provider-side idempotency: a service of your own that keeps one outcome per idempotency key.
export { IdempotentOperations, type IdempotentOperationsOptions } from "./effects/operations/idempotent.js";
export { memoryOperationStore, type MemoryOperationStore } from "./effects/operations/memory.js";
export type { OperationOutcome, OperationRecord, OperationStore } from "./effects/operations/types.js";

// ===================================== Host =====================================
// One process from one description: runtime, dispatcher, relay, consumers; handles and waits.
export {
  createHost,
  type Host,
  type HostConsumer,
  type HostOptions,
  type HostOwnership,
  type HostRetention,
} from "./host/host.js";
export type { HostPeers } from "./host/peers.js";
export type { ActorHandle, CommandsOf, StateOf } from "./host/handles.js";
export type { SettledEffect, WaitOptions } from "./host/await.js";
// The runtime alone (the host builds one): sends commands to actors, commits their decisions.
export {
  Runtime,
  type RuntimeJournal,
  type RuntimeOptions,
  type SendOptions,
  type SendResult,
} from "./core/runtime.js";
// The journal a URL names (postgres://…, sqlite:PATH, memory:), loading only that back end.
export { openJournal } from "./journal/open.js";
// The operator CLI as a program: a CLI of your own gives it your consumers, so dead letters can be replayed.
export { createOncelyCli, runOncelyCli, type OncelyCliOptions } from "./cli/program.js";
export type { CliConsumers } from "./cli/dead-letters.js";
// What every component takes injected: time, ids, randomness (deterministic ones: oncely/testing).
export {
  randomIds,
  systemClock,
  systemRandom,
  type Clock,
  type IdGenerator,
  type Random,
} from "./core/clock.js";

// ====================== Messaging and integration events ======================
// The envelope and the transports it travels on (NATS: oncely/nats).
export type { Envelope } from "./messaging/envelope.js";
export type {
  Delivery,
  DeliveryHandler,
  DeliveryOutcome,
  SubscribeOptions,
  Subscription,
  Transport,
} from "./messaging/transport.js";
export { InProcessTransport, type InProcessTransportOptions } from "./messaging/transports/in-process.js";
export {
  JournalTransport,
  type JournalTransportJournal,
  type JournalTransportOptions,
} from "./messaging/transports/journal.js";
export { RoutedTransport, type RoutedTransportOptions } from "./messaging/transports/routed.js";
export { subjectFor } from "./messaging/subjects.js";
// The relay publishes the outbox; a consumer handles what arrives, once, in order when sequenced.
export { Relay, type RelayJournal, type RelayOptions } from "./messaging/relay.js";
export { Consumer } from "./messaging/consumer.js";
export type { ConsumerJournal, ConsumerOptions, OrderingMode } from "./messaging/consumer-options.js";
export type {
  CommandHandler,
  CommandTarget,
  ConsumerHandler,
  HandleOutcome,
  HandleResult,
  ProjectionHandler,
  ProjectTools,
} from "./messaging/handlers.js";
// Projections (documents built from events) and process managers (events to commands).
export {
  defineProjection,
  eventsFromOutbox,
  rebuildProjection,
  type Projection,
  type ProjectionDefinition,
  type RebuildOptions,
} from "./messaging/projection.js";
export { retireConsumer } from "./messaging/collection-owners.js";
export {
  defineProcessManager,
  type ProcessEventCommand,
  type ProcessManager,
  type ProcessManagerDefinition,
  type ProcessReaction,
} from "./messaging/process-manager.js";
// Facts that only move forward, whatever order their events arrive in.
export { derived, monotonic, type Advance, type Monotonic } from "./messaging/facts.js";
// Authenticity: signing what a context publishes, verifying what a consumer believes.
export {
  keyring,
  MIN_SECRET_BYTES,
  signerFor,
  verifierFor,
  type Keyring,
  type RejectionReason,
  type Signer,
  type SigningKey,
  type Verifier,
  type VerifierOptions,
} from "./messaging/signing.js";
// Dead letters and sequence gaps: what an operator replays, skips or supplies.
export { DeadLetters, type DeadLetterPayload, type ReplayResult } from "./messaging/dead-letters.js";
export {
  GAP_ALERTS,
  isGapResolved,
  type GapAlert,
  type GapDecision,
  type GapInfo,
  type GapStatus,
  type ReconcileHook,
} from "./messaging/gaps.js";
export {
  listGaps,
  skipGap,
  supplyGapEvent,
  type GapOperator,
  type ParkedGap,
  type SkippedGap,
  type SuppliedGapEvent,
} from "./messaging/gap-tools.js";
// Retention: the jobs that delete what no redelivery can need any more (outbox, inbox, published log).
export { OutboxRetention, type OutboxRetentionOptions } from "./retention/outbox.js";
export { InboxRetention, type InboxRetentionOptions } from "./retention/inbox.js";
export { PublishedRetention, type PublishedRetentionOptions } from "./retention/published.js";

// ============================= Journal (types only) =============================
// The contract a back end implements, as role interfaces; `Journal` is their intersection.
export type {
  Journal,
  JournalReader,
  EventStore,
  EventReader,
  StreamWrites,
  OutboxStore,
  OutboxReader,
  OutboxWrites,
  InboxStore,
  InboxReader,
  ConsumerState,
  ConsumerStateReader,
  ConsumerStateWrites,
  DeadLetterStore,
  DeadLetterReader,
  DeadLetterWrites,
  PublishedLog,
  PublishedLogReader,
  DocumentReader,
  DocumentWrites,
  JournalAdmin,
  // What goes in and comes out.
  CheckpointRecord,
  CheckpointWrite,
  ClaimOptions,
  Commit,
  CommitResult,
  DeadLetterFilter,
  DeadLetterRecord,
  DocumentRecord,
  EventRecord,
  ForgottenConsumer,
  InboxEntry,
  InboxRecord,
  InboxWrite,
  JournalSummary,
  NewDeadLetter,
  NewEvent,
  NewOutboxRow,
  NewPublished,
  OutboxCategory,
  OutboxDone,
  OutboxFilter,
  OutboxRow,
  OutboxStatus,
  OutboxUpdate,
  ParkedRecord,
  PublishedRecord,
  SnapshotRecord,
  SnapshotTail,
  StreamVersion,
} from "./journal/types.js";

// =================================== Ownership ===================================
// Which worker runs which actors: slices leased in the journal, fenced; commands routed to the owner.
export { ownsEverything, type Ownership } from "./core/slices.js";
export { SliceLeaseManager, type SliceLeaseOptions } from "./ownership/lease-manager.js";
export {
  CommandRouter,
  type CommandRouterOptions,
  type RoutedResult,
  type RouterPeers,
} from "./ownership/router.js";

// ================================= Observability =================================
// Logs, metrics (prom-client, in a registry you pass) and traces (OpenTelemetry API).
export { silentLogger, type Logger } from "./core/logger.js";
export { observeJournal, type ObservedJournal, type ObserveJournalOptions } from "./observability/journal-metrics.js";
export {
  observeConsumerLag,
  type ObserveConsumerLagOptions,
} from "./observability/consumer-lag-metrics.js";
export { consumerLag, type ConsumerLag, type PendingCount } from "./messaging/consumer-lag.js";
export { messagingMetrics, type MessagingMetrics } from "./messaging/metrics.js";
export { ATTR as SPAN_ATTRIBUTES, type TraceCarrier } from "./observability/tracing.js";

// ==================================== Errors ====================================
// Every error class, each saying whether retrying helps: `errors.VersionConflictError`, ...
export * as errors from "./errors.js";
// The four a caller or a handler meets most, also by name: what a refused command or bad input throws,
// and what a handler throws to say whether another attempt can help.
export { CommandRejectedError, InvalidInputError, RetryableError, TerminalError } from "./base/errors.js";
