import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import type { Clock } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Logger } from "../core/logger.js";
import type { OutboxReader, OutboxRow, OutboxStore } from "../journal/types.js";
import { EffectNotFoundError, EffectNotRetryableError, EffectNotSettleableError } from "./errors.js";
import { compactState, effectRowState, type PendingOutcome } from "./row-state.js";
import type { EffectView, Settlement } from "./types.js";
import { effectView } from "./view.js";

export interface ReconciliationItem extends EffectView {
  /** The input the effect was requested with (to look it up at the provider by hand). */
  input: unknown;
  /** When the effect went Unknown (epoch ms), if recorded; for `retries-exhausted`, when it escalated. */
  unknownSince: number | null;
  /**
   * Why it waits here. `unknown`: the provider may have acted (lookups found nothing definite,
   * or there is no lookup). `retries-exhausted`: every recent run was answered "not performed"
   * until the retry budget ran out (see `lastError`); it may be retried (`retry`) with the same key.
   */
  cause: "unknown" | "retries-exhausted";
  /**
   * True when the provider never acted: retries exhausted and no run of the key was ambiguous.
   * Settling it `failed` is then safe without asking the provider.
   */
  neverPerformed: boolean;
}

/** An operator's request to run a `retries-exhausted` effect again, with the same key. */
export interface Retry {
  by: string;
  note?: string | undefined;
}

const retrySchema = z.object({
  by: z.string({ error: "by (the operator) is required" }).trim().min(1, "by (the operator) is required"),
  note: z.string().optional(),
});

export const settlementSchema = z.discriminatedUnion("outcome", [
  z.object({
    outcome: z.literal("succeeded"),
    result: z.unknown().refine((v) => v !== undefined, { message: "result is required" }),
    by: z.string().trim().min(1, "by (the operator) is required"),
    note: z.string().optional(),
  }),
  z.object({
    outcome: z.literal("failed"),
    reason: z.string().trim().min(1, "reason is required"),
    by: z.string().trim().min(1, "by (the operator) is required"),
    note: z.string().optional(),
  }),
]);

/** What reconciliation uses of the journal: it reads effect rows and settles one without a lease. */
export type ReconciliationJournal = OutboxReader & Pick<OutboxStore, "forceOutbox">;

/**
 * The reconciliation queue: effects whose outcome stayed Unknown after their lookup budget.
 * Needs only the journal (no actor definitions), so a CLI can run it.
 *
 * Settling writes the operator's decision onto the outbox row (status back to `pending`, the
 * settlement in `result`). A dispatcher then sends it to the owner as
 * `oncely.effect.succeeded|failed` with `via: "operator"`, without calling the handler; the
 * owner's commit records the event and marks the row done. Until a dispatcher runs, the
 * settlement is durable but not yet an event in the owner.
 */
/** An effect row waiting for an operator, as the queue lists it. */
export function reconciliationItem(row: OutboxRow): ReconciliationItem {
  const state = effectRowState(row);
  return {
    ...effectView(row),
    input: (row.payload as { input?: unknown } | null)?.input ?? null,
    unknownSince: state.unknownSince ?? null,
    cause: state.retriesExhausted ? "retries-exhausted" : "unknown",
    neverPerformed: state.retriesExhausted === true && state.maybePerformed !== true,
  };
}

export class Reconciliation {
  private readonly journal: ReconciliationJournal;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(options: { journal: ReconciliationJournal; clock?: Clock; logger?: Logger }) {
    this.journal = options.journal;
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.logger = env.logger;
  }

  async list(filter: { kind?: string; owner?: string; limit?: number } = {}): Promise<ReconciliationItem[]> {
    const rows = await this.journal.listOutbox({
      category: "effect",
      status: "reconcile",
      ...(filter.kind === undefined ? {} : { kind: filter.kind }),
      ...(filter.owner === undefined ? {} : { stream: filter.owner }),
      ...(filter.limit === undefined ? {} : { limit: filter.limit }),
    });
    return rows.map(reconciliationItem);
  }

  async count(): Promise<number> {
    return (await this.journal.listOutbox({ category: "effect", status: "reconcile" })).length;
  }

  /**
   * Record an operator's decision for an Unknown effect (in the queue, or still being resolved).
   * Throws `InvalidInputError` for a malformed settlement, `EffectNotFoundError` for an unknown
   * key, `EffectNotSettleableError` when the effect is not Unknown (never run yet, or already final).
   */
  async settle(key: string, settlement: Settlement): Promise<EffectView> {
    const parsed = settlementSchema.safeParse(settlement);
    if (!parsed.success) {
      throw new InvalidInputError(
        `invalid settlement for "${key}"`,
        parsed.error.issues.map((i) => `${i.path.join(".") || "settlement"}: ${i.message}`),
      );
    }
    const row = await this.journal.getOutbox(key);
    if (row?.category !== "effect") throw new EffectNotFoundError(key);
    if (row.status !== "reconcile" && row.status !== "resolving") throw new EffectNotSettleableError(key, row.status);
    const s = parsed.data;
    const pending: PendingOutcome =
      s.outcome === "succeeded"
        ? {
            outcome: "succeeded",
            result: s.result ?? null,
            via: "operator",
            by: s.by,
            ...(s.note ? { note: s.note } : {}),
          }
        : { outcome: "failed", reason: s.reason, via: "operator", by: s.by, ...(s.note ? { note: s.note } : {}) };
    const now = this.clock.now();
    const state = effectRowState(row);
    const ok = await this.journal.forceOutbox(
      key,
      { status: "pending", notBefore: now, result: compactState({ ...state, pending }) },
      now,
    );
    if (!ok) throw new EffectNotSettleableError(key, "done");
    this.logger.info({ key, outcome: s.outcome, by: s.by }, "effect settled by an operator");
    const updated = await this.journal.getOutbox(key);
    return effectView(updated ?? row);
  }

  /**
   * Run a `retries-exhausted` effect again, with the same key and a fresh retry budget: the row
   * goes back to `pending`, due now. Only for those: a run again of an effect whose outcome is
   * Unknown could act twice at a provider that does not dedup. Throws `InvalidInputError` for a
   * missing `by`, `EffectNotFoundError` for an unknown key, `EffectNotRetryableError` otherwise.
   */
  async retry(key: string, retry: Retry): Promise<EffectView> {
    const parsed = retrySchema.safeParse(retry);
    if (!parsed.success) {
      throw new InvalidInputError(
        `cannot retry "${key}"`,
        parsed.error.issues.map((i) => i.message),
      );
    }
    const row = await this.journal.getOutbox(key);
    if (row?.category !== "effect") throw new EffectNotFoundError(key);
    const state = effectRowState(row);
    if (row.status !== "reconcile" || !state.retriesExhausted) throw new EffectNotRetryableError(key, row.status);
    const { by, note } = parsed.data;
    const now = this.clock.now();
    const ok = await this.journal.forceOutbox(
      key,
      {
        status: "pending",
        notBefore: now,
        lastError: `retried by ${by}${note ? ` (${note})` : ""}; it was: ${row.lastError ?? "?"}`,
        result: compactState({
          ...state,
          retriesExhausted: undefined,
          notPerformed: undefined,
          notPerformedSince: undefined,
          rerunAllowed: true,
        }),
      },
      now,
    );
    if (!ok) throw new EffectNotRetryableError(key, "done");
    this.logger.info({ key, by, ...(note ? { note } : {}) }, "effect retried by an operator");
    const updated = await this.journal.getOutbox(key);
    return effectView(updated ?? row);
  }
}
