import { InjectedFault } from "../base/errors.js";
import type { Clock, Random } from "../core/clock.js";
import type { Typed } from "../core/decider.js";
import type { Faults } from "../core/faults.js";
import type { HandOver } from "../core/hand-over.js";
import type { Logger } from "../core/logger.js";
import type { OutboxRow, OutboxStore, OutboxUpdate } from "../journal/types.js";
import { tally } from "../observability/tally.js";
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
  stats: DispatcherStats;
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
  retried: number;
  unknown: number;
  reconcile: number;
  delivered: number;
  rejected: number;
  dead: number;
  /** Leases found lost when writing back (another dispatcher took the row over). */
  leaseLost: number;
  /** Rows handed over at their commit (also counted in `claimed`): no claim query ran for them. */
  handedOver: number;
}

export const emptyStats = (): DispatcherStats => ({
  claimed: 0,
  runs: 0,
  lookups: 0,
  completed: 0,
  failed: 0,
  retried: 0,
  unknown: 0,
  reconcile: 0,
  delivered: 0,
  rejected: 0,
  dead: 0,
  leaseLost: 0,
  handedOver: 0,
});

/** Write back to a row we hold the lease of; a lost lease is counted and logged, not thrown. */
export async function writeRow(ctx: StepContext, row: OutboxRow, update: OutboxUpdate): Promise<boolean> {
  const ok = await ctx.journal.updateOutbox(row.id, ctx.owner, update, ctx.clock.now());
  if (!ok) {
    tally(ctx.stats, "leaseLost", ctx.metrics.leaseLost);
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
