import type { OutboxCategory } from "./types.js";

/**
 * The outbox wake-up of every journal (`Journal.onOutbox`). A listener that names categories is
 * woken only when rows of one of them were added (due now) (a relay by `event` rows, a dispatcher by `effect`
 * and `message` rows), so a commit that only publishes an event does not send a dispatcher to claim
 * rows that are not there. A wake-up that cannot say what was added (an update back to pending, a
 * forced change, another process's NOTIFY, a listening connection back after a drop) wakes all.
 * Each listener is called in a microtask of its own, never inside the journal's call.
 */
export class OutboxSignal {
  private readonly listeners = new Map<() => void, ReadonlySet<OutboxCategory> | undefined>();

  add(listener: () => void, categories?: readonly OutboxCategory[]): () => void {
    this.listeners.set(listener, categories === undefined ? undefined : new Set(categories));
    return () => this.listeners.delete(listener);
  }

  /** Wakes the listeners of any of `added` (every listener when undefined: what was added is not known). */
  wake(added?: ReadonlySet<OutboxCategory>): void {
    for (const [listener, wanted] of this.listeners) {
      if (added === undefined || wanted === undefined || intersects(wanted, added)) queueMicrotask(listener);
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

const intersects = (a: ReadonlySet<OutboxCategory>, b: ReadonlySet<OutboxCategory>): boolean => {
  for (const item of b) if (a.has(item)) return true;
  return false;
};
