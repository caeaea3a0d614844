/** The effect protocol: handlers, dispatcher, status machine, cross-actor view, reconciliation. */

export { canonicalJson, requestHash } from "../base/canonical-json.js";
export { InboxRetention, type InboxRetentionOptions, pruneInbox } from "../retention/inbox.js";
export {
  OutboxRetention,
  type OutboxRetentionOptions,
  pruneOutbox,
} from "../retention/outbox.js";
export { backoffDelay } from "./backoff.js";
export type { CommandSink, DispatcherStats, MessageRetryPolicy } from "./context.js";
export {
  type DeclaredEffect,
  defineEffect,
  type Effect,
  type EffectImplementation,
  type EffectLookup,
  type EffectSpec,
  type LookupContext,
  lookupMatching,
  type Parser,
  type SchemaLike,
} from "./define-effect.js";
export { Dispatcher, type DispatcherJournal, type DispatcherOptions } from "./dispatcher.js";
export {
  EffectNotFoundError,
  EffectNotRetryableError,
  EffectNotSettleableError,
  EffectTimeoutError,
} from "./errors.js";
export { type EffectMetrics, effectMetrics } from "./metrics.js";
export { IdempotentOperations, type IdempotentOperationsOptions } from "./operations/idempotent.js";
export { MemoryOperationStore, memoryOperationStore } from "./operations/memory.js";
export type { OperationOutcome, OperationRecord, OperationStore } from "./operations/types.js";
export { DEFAULT_EFFECT_POLICY, resolvePolicy } from "./policy.js";
export {
  Reconciliation,
  type ReconciliationItem,
  type ReconciliationJournal,
  type Retry,
  settlementSchema,
} from "./reconciliation.js";
export { effectStatusAfter, isFinalStatus, statusOfOutcome } from "./status.js";
export { type DeadlineRequest, deadline, TIMER_KIND } from "./timer.js";
export {
  type Backoff,
  type DefiniteResult,
  type EffectHandler,
  type EffectPolicy,
  type EffectStatus,
  type EffectView,
  failed,
  type LookupResult,
  type MatchedLookup,
  type NotPerformed,
  notFound,
  notPerformed,
  type RunContext,
  type RunResult,
  type Settlement,
  succeeded,
} from "./types.js";
export { type EffectFilter, effectView, getEffect, listEffects } from "./view.js";
