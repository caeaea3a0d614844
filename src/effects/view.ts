import type { OutboxReader, OutboxRow, OutboxStatus } from "../journal/types.js";
import { effectRowState } from "./row-state.js";
import type { EffectStatus, EffectView } from "./types.js";

export interface EffectFilter {
  status?: EffectStatus | EffectStatus[];
  kind?: string;
  /** The owning actor's address. */
  owner?: string;
  needsReconciliation?: boolean;
  limit?: number;
}

/**
 * An effect's status as the outbox shows it. The owner's state is the authority for its own
 * effects; this view answers across actors ("what is Unknown right now?") and lags the owner by
 * at most one step (a known outcome waiting for the owner's commit still shows as before).
 */
export function effectView(row: OutboxRow): EffectView {
  const state = effectRowState(row);
  return {
    key: row.id,
    kind: row.kind,
    owner: row.stream,
    status: statusOfRow(row, state.unknownSince !== undefined),
    needsReconciliation: row.status === "reconcile",
    attempts: row.attempts,
    result: row.status === "done" ? row.result : null,
    lastError: row.lastError,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function statusOfRow(row: OutboxRow, wentUnknown: boolean): EffectStatus {
  switch (row.status) {
    case "done":
      // A fired timer (`deadline`) did what it was for, whatever its owner made of it.
      return row.outcome === "completed" || row.outcome === "fired" ? "Completed" : "Failed";
    case "dead":
      return "Failed";
    case "resolving":
    case "reconcile":
      return "Unknown";
    case "pending":
      return wentUnknown ? "Unknown" : "Pending";
  }
}

const ROW_STATUSES: Record<EffectStatus, OutboxStatus[]> = {
  NotRequested: [],
  Pending: ["pending"],
  Unknown: ["pending", "resolving", "reconcile"],
  Completed: ["done"],
  Failed: ["done", "dead"],
};

/** Effects across actors, from the outbox, oldest first. An unrequested key has no row: `NotRequested`. */
export async function listEffects(
  journal: Pick<OutboxReader, "listOutbox">,
  filter: EffectFilter = {},
): Promise<EffectView[]> {
  const wanted =
    filter.status === undefined ? undefined : Array.isArray(filter.status) ? filter.status : [filter.status];
  const statuses = wanted ? [...new Set(wanted.flatMap((s) => ROW_STATUSES[s]))] : undefined;
  if (statuses && statuses.length === 0) return [];
  const rows = await journal.listOutbox({
    category: "effect",
    ...(filter.kind === undefined ? {} : { kind: filter.kind }),
    ...(filter.owner === undefined ? {} : { stream: filter.owner }),
    ...(statuses === undefined ? {} : { status: statuses }),
    ...(filter.needsReconciliation ? { status: "reconcile" as const } : {}),
  });
  const views: EffectView[] = [];
  for (const row of rows) {
    const view = effectView(row);
    if (wanted && !wanted.includes(view.status)) continue;
    if (filter.needsReconciliation !== undefined && view.needsReconciliation !== filter.needsReconciliation) continue;
    views.push(view);
    if (filter.limit !== undefined && views.length >= filter.limit) break;
  }
  return views;
}

/** One effect by key, or `NotRequested` when no row exists. */
export async function getEffect(
  journal: Pick<OutboxReader, "getOutbox">,
  key: string,
): Promise<EffectView | { key: string; status: "NotRequested" }> {
  const row = await journal.getOutbox(key);
  if (row?.category !== "effect") return { key, status: "NotRequested" };
  return effectView(row);
}
