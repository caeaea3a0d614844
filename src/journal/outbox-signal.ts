import type { OutboxCategory } from "./types.js";

/**
 * What a commit added for somebody to claim: the categories and slices of its rows inserted
 * unleased and due now (`wakesAtCommit`). Undefined where a wake-up cannot say (an update back to
 * pending, a forced change, a listening connection back after a drop): then it wakes everyone.
 */
export interface AddedRows {
  categories: ReadonlySet<OutboxCategory>;
  slices: ReadonlySet<number>;
  /** Another process wrote it (a NOTIFY): a listener of no category (`[]`) hears every such one. */
  elsewhere?: boolean;
}

/** Whose slices a listener serves: woken only for rows of a slice it owns (absent: every slice). */
export type OwnsSlice = (slice: number) => boolean;

interface Wanted {
  categories: ReadonlySet<OutboxCategory> | undefined;
  owns: OwnsSlice | undefined;
}

/**
 * The outbox wake-up of every journal (`Journal.onOutbox`). A listener that names categories is
 * woken only when rows of one of them were added (due now) (a relay by `event` rows, a dispatcher by `effect`
 * and `message` rows), so a commit that only publishes an event does not send a dispatcher to claim
 * rows that are not there; a listener that names the slices it owns (a worker holding some slices)
 * only when rows of one of them were added, so a commit on one worker wakes the owner of its rows
 * and not every worker (PostgreSQL's NOTIFY carries both, see `wakePayload`). A wake-up that cannot
 * say what was added (an update back to pending, a forced change, a NOTIFY of an older release, a
 * listening connection back after a drop) wakes all. A listener of no category (`[]`) is woken only
 * by those and by every NOTIFY of another process: it follows this process's own writes itself.
 * Each listener is called in a microtask of its own, never inside the journal's call.
 */
export class OutboxSignal {
  private readonly listeners = new Map<() => void, Wanted>();

  add(listener: () => void, categories?: readonly OutboxCategory[], owns?: OwnsSlice): () => void {
    this.listeners.set(listener, { categories: categories === undefined ? undefined : new Set(categories), owns });
    return () => this.listeners.delete(listener);
  }

  /** Wakes the listeners of any of `added` (every listener when undefined: what was added is not known). */
  wake(added?: AddedRows): void {
    for (const [listener, wanted] of this.listeners) {
      if (added === undefined || wants(wanted, added)) queueMicrotask(listener);
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

/**
 * Whether a row just inserted is one to wake listeners for: not leased at commit (nobody was handed
 * it) and due now. A row due later (a durable timer) is for the claimer's poll. The rule of all
 * three journals.
 */
export const wakesAtCommit = (row: { leaseOwner: string | null; notBefore: number }, now: number): boolean =>
  row.leaseOwner === null && row.notBefore <= now;

/**
 * Whether an update may leave its row to a claimer, so that claimers must be woken: forced (no
 * owner), or its lease released (the default). A holder's write that keeps its lease (an attempt
 * recorded before the call) leaves nothing to claim, whatever the row's status.
 */
export const updateReleasesRow = (owner: string | null, update: { releaseLease?: boolean }): boolean =>
  owner === null || update.releaseLease !== false;

/** Collects the rows a commit (or a batch) added, for one wake-up. */
export class AddedRowsCollector implements AddedRows {
  readonly categories = new Set<OutboxCategory>();
  readonly slices = new Set<number>();

  add(row: { category: OutboxCategory; slice: number }): void {
    this.categories.add(row.category);
    this.slices.add(row.slice);
  }

  get empty(): boolean {
    return this.categories.size === 0;
  }
}

/**
 * PostgreSQL's NOTIFY payload for what a batch added: `effect,message/3,17` (categories, then
 * slices), `/` when nothing due now (a durable timer), or `*` when some write in it may make a row claimable that the client cannot place
 * (an update back to pending). An empty payload (what releases before it sent) and anything this
 * code cannot read mean "not known": `parseWakePayload` answers undefined, and everyone wakes.
 */
export function wakePayload(added: AddedRows | undefined): string {
  if (added === undefined) return "*";
  return `${[...added.categories].join(",")}/${[...added.slices].join(",")}`;
}

const CATEGORIES: ReadonlySet<string> = new Set<OutboxCategory>(["effect", "message", "event"]);

export function parseWakePayload(payload: string | undefined): AddedRows | undefined {
  const slash = payload?.indexOf("/") ?? -1;
  if (payload === undefined || slash < 0) return undefined;
  // `/`: nothing due now was added (a durable timer's row, found by the poll): no claimer wakes.
  if (payload === "/") return { categories: new Set(), slices: new Set(), elsewhere: true };
  const categories = payload.slice(0, slash).split(",");
  const slices = payload
    .slice(slash + 1)
    .split(",")
    .map((text) => (/^\d{1,9}$/.test(text) ? Number(text) : Number.NaN));
  if (!categories.every((c) => CATEGORIES.has(c)) || slices.some((s) => Number.isNaN(s))) return undefined;
  return { categories: new Set(categories as OutboxCategory[]), slices: new Set(slices), elsewhere: true };
}

function wants(wanted: Wanted, added: AddedRows): boolean {
  // `[]`: a waiter that follows this process's writes itself, and hears of other processes' by this.
  if (wanted.categories?.size === 0) return added.elsewhere === true;
  if (added.categories.size === 0) return false;
  if (wanted.categories !== undefined && !intersects(wanted.categories, added.categories)) return false;
  if (wanted.owns === undefined) return true;
  for (const slice of added.slices) if (wanted.owns(slice)) return true;
  return false;
}

const intersects = (a: ReadonlySet<OutboxCategory>, b: ReadonlySet<OutboxCategory>): boolean => {
  for (const item of b) if (a.has(item)) return true;
  return false;
};
