import { InvalidInputError, TerminalError } from "../base/errors.js";

/**
 * Independent facts with monotonic transitions (seed 2: keep `PaymentStatus` and `ShippingStatus`
 * apart, derive `Order.Status`). A fact only moves forward: a late event that would move it
 * backwards is ignored (and counted), so arrival order cannot roll state back.
 */

/** A forward move between two alternatives of one rank (e.g. `Processed` → `Failed`). Retrying cannot help. */
export class IllegalTransitionError extends TerminalError {
  constructor(
    readonly from: string,
    readonly to: string,
    readonly fact?: string,
  ) {
    super(
      `illegal transition${fact ? ` of ${fact}` : ""} from "${from}" to "${to}": they are alternatives of one step`,
    );
  }
}

export interface Advance<S extends string> {
  /** The fact after the transition: `next` when it moved forward, else the current value. */
  value: S;
  /** True when the value moved forward. */
  changed: boolean;
  /** True when `next` is behind the current value: ignored, to be counted by the caller. */
  backwards: boolean;
}

export interface Monotonic<S extends string> {
  readonly order: readonly (S | readonly S[])[];
  /** Position of a value; alternatives share one. */
  rank(value: S): number;
  /**
   * Apply a transition. Equal: no change (a duplicate). Behind: ignored, `backwards`. Ahead:
   * moves. Another alternative of the same rank: `IllegalTransitionError`.
   * `current` undefined means "nothing known yet": any value is a forward move.
   */
  advance(current: S | undefined, next: S): Advance<S>;
  /** The later of two values (for merging); throws on two different alternatives. */
  max(a: S | undefined, b: S): S;
}

/**
 * A monotonic status. Each element of `order` is one step; an array is a step with alternatives
 * (`["Pending", ["Processed", "Failed"]]`: Pending may become either, but never one the other).
 *
 * @example
 * const payment = monotonic(["Pending", ["Processed", "Failed"]] as const);
 * payment.advance("Processed", "Pending"); // { value: "Processed", changed: false, backwards: true }
 */
export function monotonic<const S extends string>(order: readonly (S | readonly S[])[], fact?: string): Monotonic<S> {
  const ranks = new Map<string, number>();
  order.forEach((step, index) => {
    for (const value of typeof step === "string" ? [step] : step) {
      if (ranks.has(value)) throw new InvalidInputError(`monotonic order lists "${value}" twice`);
      ranks.set(value, index);
    }
  });
  const rank = (value: S): number => {
    const r = ranks.get(value);
    if (r === undefined) {
      throw new InvalidInputError(`"${value}" is not a known value${fact ? ` of ${fact}` : ""}`, [
        `known: ${[...ranks.keys()].join(", ")}`,
      ]);
    }
    return r;
  };
  const advance = (current: S | undefined, next: S): Advance<S> => {
    const to = rank(next);
    if (current === undefined) return { value: next, changed: true, backwards: false };
    const from = rank(current);
    if (current === next) return { value: current, changed: false, backwards: false };
    if (to > from) return { value: next, changed: true, backwards: false };
    if (to < from) return { value: current, changed: false, backwards: true };
    throw new IllegalTransitionError(current, next, fact);
  };
  return {
    order,
    rank,
    advance,
    max: (a, b) => advance(a, b).value,
  };
}

/**
 * A summary status computed from facts at read time, never stored by an event handler:
 * the first rule whose predicate holds wins, else `fallback`.
 *
 * @example
 * const orderStatus = derived<OrderFacts, "Shipped" | "Paid" | "Pending">(
 *   [["Shipped", (f) => f.shipping === "Shipped"], ["Paid", (f) => f.payment === "Processed"]],
 *   "Pending",
 * );
 */
export function derived<F, S>(rules: readonly (readonly [S, (facts: F) => boolean])[], fallback: S): (facts: F) => S {
  return (facts) => {
    for (const [status, holds] of rules) if (holds(facts)) return status;
    return fallback;
  };
}
