import { InjectedFault } from "../base/errors.js";
import type { Clock, Random } from "../core/clock.js";
import type { Typed } from "../core/decider.js";
import type { Faults } from "../core/faults.js";
import type { HandOver } from "../core/hand-over.js";
import type { Logger } from "../core/logger.js";
import type { OutboxRow, OutboxStore, OutboxUpdate } from "../journal/types.js";
import { type SeriesTally, Tally } from "../observability/tally.js";
import type { EffectMetrics } from "./metrics.js";
import type { EffectHandler, EffectPolicy } from "./types.js";

/** What the dispatcher needs of a runtime: sending a command to an actor (a `Runtime` fits). */
export interface CommandSink {
  send(
    address: string,
    command: Typed,
    options?: { messageId?: string; correlationId?: string; deliveringRow?: string },
  ): Promise<{ reply: unknown; duplicate?: boolean; events?: readonly unknown[] }>;
  /**
   * A started dispatcher registers here to be handed the rows this process commits (see
   * `HandOver`); undefined unregisters. Optional: without it, every row goes through a claim.
   */
  handOver?(dispatcher: HandOver, active: boolean): void;
}

/** Retry rules for actor-to-actor messages (in-process sends: no provider, no ambiguity). */
export interface MessageRetryPolicy {
  /** Delivery attempts before the row goes `dead` (kept, visible, never silently dropped). */
  maxAttempts: number;
  backoff: EffectPolicy["backoff"];
}

/** Shared by the effect and message steps of one dispatcher. */
export interface StepContext {
  /** A step writes only the row it holds the lease of. */
  journal: Pick<OutboxStore, "updateOutbox">;
  runtime: CommandSink;
  owner: string;
  clock: Clock;
  random: Random;
  faults: Faults;
  logger: Logger;
  signal: AbortSignal;
  // biome-ignore lint/suspicious/noExplicitAny: handlers of every input and result type
  handlers: Map<string, EffectHandler<any, any>>;
  policyFor(kind: string): EffectPolicy;
  messageRetry: MessageRetryPolicy;
  /** The dispatcher's counts: shared by every step of it (see `Dispatcher.stats`). */
  counts: DispatcherCounts;
  metrics: EffectMetrics;
  /** A claimed effect row of a kind this dispatcher has no handler for: counted, warned once per kind. */
  noHandler(kind: string): void;
  /** A timer fired at an owner of `actorType`; `missed` when the owner acted on it (see `timerStep`). */
  timerFired(actorType: string, name: string, missed: boolean): void;
}

export interface DispatcherStats {
  claimed: number;
  runs: number;
  lookups: number;
  completed: number;
  failed: number;
  /** Same-key retries: after an ambiguous answer (a provider that dedups) or a not-performed one. */
  retried: number;
  unknown: number;
  reconcile: number;
  delivered: number;
  rejected: number;
  /** Rows gone dead: effect outcomes and fired timers their owner rejected, messages that gave up. */
  dead: number;
  /** Leases found lost when writing back (another dispatcher took the row over). */
  leaseLost: number;
  /** Rows handed over at their commit (also counted in `claimed`): no claim query ran for them. */
  handedOver: number;
}

/**
 * A dispatcher's counts, each a tally that moves its series in `EffectMetrics` (named beside it),
 * so `Dispatcher.stats` and the metrics are one count. One object per dispatcher, shared by the
 * step contexts of its claims and hand-overs.
 */
export interface DispatcherCounts {
  /** `oncely_outbox_rows_taken_total{how="claim"}`. */
  claimedByQuery: Tally;
  /** `oncely_outbox_rows_taken_total{how="hand-over"}`. */
  handedOver: Tally;
  /** `oncely_effect_attempts_total`. */
  runs: Tally;
  /** `oncely_effect_lookups_total` (counted when the lookup answered, by its answer). */
  lookups: Tally;
  /** `oncely_effect_outcomes_total{outcome="succeeded" | "failed" | "retried" | "unknown" | "reconcile" | "dead"}`. */
  completed: Tally;
  failed: Tally;
  retried: Tally;
  unknown: Tally;
  reconcile: Tally;
  deadEffects: Tally;
  /**
   * Not-performed answers retried with the same key. No series of its own: it is
   * `oncely_effect_outcomes_total{outcome="not-performed"}` less the not-performed answers that
   * escalated instead (`oncely_effect_escalations_total{reason="max-attempts" | "max-age"}`).
   */
  retriedNotPerformed: number;
  /** `oncely_messages_total{outcome="delivered" | "rejected" | "dead"}`. */
  delivered: Tally;
  rejected: Tally;
  deadMessages: Tally;
  /** `oncely_timer_dead_total`. */
  deadTimers: Tally;
  /** `oncely_outbox_lease_lost_total`. */
  leaseLost: SeriesTally;
}

/** A dispatcher's counts at zero; `leaseLost` moves the one series it names. */
export function newCounts(leaseLost: SeriesTally): DispatcherCounts {
  return {
    claimedByQuery: new Tally(),
    handedOver: new Tally(),
    runs: new Tally(),
    lookups: new Tally(),
    completed: new Tally(),
    failed: new Tally(),
    retried: new Tally(),
    unknown: new Tally(),
    reconcile: new Tally(),
    deadEffects: new Tally(),
    retriedNotPerformed: 0,
    delivered: new Tally(),
    rejected: new Tally(),
    deadMessages: new Tally(),
    deadTimers: new Tally(),
    leaseLost,
  };
}

/** What `Dispatcher.stats` reports, read from its counts. */
export function statsOf(c: DispatcherCounts): DispatcherStats {
  return {
    claimed: c.claimedByQuery.value + c.handedOver.value,
    runs: c.runs.value,
    lookups: c.lookups.value,
    completed: c.completed.value,
    failed: c.failed.value,
    retried: c.retried.value + c.retriedNotPerformed,
    unknown: c.unknown.value,
    reconcile: c.reconcile.value,
    delivered: c.delivered.value,
    rejected: c.rejected.value,
    dead: c.deadEffects.value + c.deadMessages.value + c.deadTimers.value,
    leaseLost: c.leaseLost.value,
    handedOver: c.handedOver.value,
  };
}

/** Write back to a row we hold the lease of; a lost lease is counted and logged, not thrown. */
export async function writeRow(ctx: StepContext, row: OutboxRow, update: OutboxUpdate): Promise<boolean> {
  const ok = await ctx.journal.updateOutbox(row.id, ctx.owner, update, ctx.clock.now());
  if (!ok) {
    ctx.counts.leaseLost.inc();
    ctx.logger.warn({ id: row.id, owner: ctx.owner }, "outbox lease lost; another dispatcher owns the row now");
  }
  return ok;
}

/** Send options that carry the row's correlation id (from its payload) to the actor it addresses. */
export function correlated(row: OutboxRow, options: { messageId?: string; deliveringRow?: string } = {}) {
  const correlationId = (row.payload as { correlationId?: unknown } | null)?.correlationId;
  return typeof correlationId === "string" ? { ...options, correlationId } : options;
}

export const errorText = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/**
 * A fault armed by a test stands for the process dying at that point: it must travel up and
 * never be handled like an ordinary failure (which would write retry state a dead process never writes).
 */
export function rethrowCrash(error: unknown): void {
  if (error instanceof InjectedFault) throw error;
}
