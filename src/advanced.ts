// biome-ignore-all assist/source/organizeImports: the groups' order is the documentation (docs/guide/api-map.md)
/**
 * `oncely/advanced`: the parts oncely's components are built from, for back ends, operator tools
 * and tests that reach below the public surface (`oncely`). An application does not need them: the
 * root entry's components use them for it. They may change shape between minor versions.
 */

// ========================= Effects: policy, hashing, status =========================
export { DEFAULT_EFFECT_POLICY, resolvePolicy } from "./effects/policy.js";
export { backoffDelay } from "./effects/backoff.js";
export { statusOfOutcome } from "./effects/status.js";
export { TIMER_KIND } from "./effects/timer.js";
// JSON with sorted keys, and its sha256: equal requests hash equally whatever their key order.
export { canonicalJson, requestHash } from "./base/canonical-json.js";

// ========================= Messaging: envelopes and subjects =========================
export {
  decodeEnvelope,
  encodeEnvelope,
  envelopeFromOutbox,
  envelopeSchema,
  MAX_AGGREGATE_VERSION,
  parseEnvelope,
  storableJson,
} from "./messaging/envelope.js";
export { readEnvelope } from "./messaging/upcast-handler.js";
export { sourceOfSubject, subjectMatches, subjectToken } from "./messaging/subjects.js";
export { brokerMessageId, signedContent } from "./messaging/signing.js";
export { backoffMs } from "./messaging/transport.js";
export { sourceStreamOf } from "./messaging/consumer-options.js";
export { deadLetterBody } from "./messaging/dead-letters.js";
export { GapMonitor } from "./messaging/gaps.js";
export { COLLECTION_OWNERS, collectionOwner, type CollectionOwner } from "./messaging/collection-owners.js";
// The single passes the retention jobs repeat (the CLI's `journal prune` runs them once).
export { pruneOutbox } from "./retention/outbox.js";
export { pruneInbox } from "./retention/inbox.js";

// ============================== Journal: beyond the contract ==============================
export { readEvent } from "./core/recovery.js";
export { outboxSlice } from "./journal/outbox-slice.js";
export { outcomeRecorded } from "./journal/outcome-record.js";
export { PUBLISHED_READER_SOURCE } from "./journal/published.js";
// The queries the console reads (a back end implements them beside the journal).
export {
  EFFECT_LIST_STATUSES,
  MAX_PAGE,
  type ConsoleQueries,
  type ConsumerPositions,
  type DeadLetterMatch,
  type DeadLetterPageQuery,
  type EffectListStatus,
  type OutboxPageQuery,
  type Page,
} from "./journal/console-queries.js";
export type { DriverName } from "./core/require-driver.js";

// ============================== Ownership: slices and leases ==============================
export {
  DEFAULT_SLICE_COUNT,
  fenceCheckpoint,
  SLICE_FENCE_CONSUMER,
  sliceOf,
  sliceOfAddress,
} from "./core/slices.js";
export { isFree, SLICE_LEASES, type SliceLease, SliceLeaseStore, WORKERS } from "./ownership/lease-store.js";
export { fairShare, planRebalance, type RebalanceInput, type RebalancePlan } from "./ownership/rebalance.js";
// Commands sent straight to the owning worker (createHost's `peers` builds these).
export { HttpPeerLink, type PeerLink } from "./ownership/peer-link.js";
export {
  PEER_PATH,
  PEER_SIGNATURE_HEADER,
  type PeerAnswer,
  type PeerRequest,
  signPeerBody,
  verifyPeerBody,
} from "./ownership/peer-protocol.js";
export { answerPeerRequest, PeerServer, type PeerServerOptions } from "./ownership/peer-server.js";

// ============================== Observability: metric sets ==============================
// Each component builds its set in the registry it is given; these read the same set back.
export { type EffectMetrics, effectMetrics } from "./effects/metrics.js";
export { type RuntimeMetrics, runtimeMetrics } from "./observability/runtime-metrics.js";
export { type OwnershipMetrics, ownershipMetrics } from "./observability/ownership-metrics.js";
export { type SnapshotMetrics, snapshotMetrics } from "./core/snapshot-metrics.js";

// ==================================== Errors ====================================
export { toError } from "./base/errors.js";
