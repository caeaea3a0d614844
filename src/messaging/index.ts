export { PublishedRetention, type PublishedRetentionOptions } from "../retention/published.js";
export {
  COLLECTION_OWNERS,
  CollectionOwnedError,
  type CollectionOwner,
  collectionOwner,
  retireConsumer,
} from "./collection-owners.js";
export { Consumer, type ConsumerJournal, type ConsumerOptions, type OrderingMode, sourceStreamOf } from "./consumer.js";
export { type ConsumerLag, consumerLag, type PendingCount } from "./consumer-lag.js";
export { type DeadLetterPayload, DeadLetters, deadLetterBody, type ReplayResult } from "./dead-letters.js";
export {
  decodeEnvelope,
  type Envelope,
  encodeEnvelope,
  envelopeFromOutbox,
  envelopeSchema,
  MAX_AGGREGATE_VERSION,
  parseEnvelope,
  storableJson,
  storableText,
} from "./envelope.js";
export { type Advance, derived, IllegalTransitionError, type Monotonic, monotonic } from "./facts.js";
export {
  type GapOperator,
  listGaps,
  type ParkedGap,
  type SkippedGap,
  type SuppliedGapEvent,
  skipGap,
  supplyGapEvent,
} from "./gap-tools.js";
export {
  GAP_ALERTS,
  type GapAlert,
  type GapDecision,
  type GapInfo,
  GapMonitor,
  type GapStatus,
  isGapResolved,
  type ReconcileHook,
} from "./gaps.js";
export type {
  CommandHandler,
  ConsumerHandler,
  HandleOutcome,
  HandleResult,
  ProjectionHandler,
  ProjectTools,
} from "./handlers.js";
export { type MessagingMetrics, messagingMetrics } from "./metrics.js";
export {
  defineProcessManager,
  type ProcessEventCommand,
  type ProcessManager,
  type ProcessManagerDefinition,
  type ProcessReaction,
} from "./process-manager.js";
export {
  defineProjection,
  eventsFromOutbox,
  type Projection,
  type ProjectionDefinition,
  type RebuildOptions,
  rebuildProjection,
} from "./projection.js";
export { Relay, type RelayJournal, type RelayOptions } from "./relay.js";
export {
  AuthenticityError,
  brokerMessageId,
  type Keyring,
  keyring,
  MIN_SECRET_BYTES,
  type RejectionReason,
  type Signer,
  type SigningKey,
  signedContent,
  signerFor,
  type Verifier,
  type VerifierOptions,
  verifierFor,
} from "./signing.js";
export { sourceOfSubject, subjectFor, subjectMatches, subjectToken } from "./subjects.js";
export {
  backoffMs,
  type Delivery,
  type DeliveryHandler,
  type DeliveryOutcome,
  type SubscribeOptions,
  type Subscription,
  type Transport,
} from "./transport.js";
export {
  type InProcessFaultKnobs,
  InProcessTransport,
  type InProcessTransportOptions,
  inProcessTransport,
} from "./transports/in-process.js";
export {
  JournalTransport,
  type JournalTransportFaults,
  type JournalTransportJournal,
  type JournalTransportOptions,
  journalTransport,
} from "./transports/journal.js";
export { RoutedTransport, type RoutedTransportOptions } from "./transports/routed.js";
export { readEnvelope } from "./upcast-handler.js";
