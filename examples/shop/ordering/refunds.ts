import type { EffectRequest } from "oncely";
import { isFinalStatus } from "oncely";
import { EFFECT_KINDS, type RefundInput } from "./effects.js";
import type { OrderEvent, RefundCause, Stage } from "./events.js";
import { applyStage } from "./fact-stage.js";
import { notRequested, type OrderState, type RefundState } from "./state.js";

/**
 * The order's refunds: compensation is not idempotency, so each refund is an effect of its own,
 * with its own key, status and dedup, decided here and nowhere else.
 *
 * - `order:{id}:refund`: the one full refund of an order, for a cancellation or a picklist the
 *   warehouse refused; whichever asks first takes the key, so an order is never refunded in full twice.
 * - `order:{id}:refund:{adjustmentId}`: a partial refund of the lines the warehouse could not ship.
 *
 * A refund never asks for more than is left of the charge: what was charged minus every refund
 * asked for that has not definitely failed. So a second refund under another key for the same
 * remaining amount is refused by this decision (nothing is left), not by the provider's cap.
 */

export const refundKey = (orderId: string, adjustmentId?: string): string =>
  adjustmentId === undefined ? `order:${orderId}:refund` : `order:${orderId}:refund:${adjustmentId}`;

export const isRefundKey = (orderId: string, key: string): boolean =>
  key === refundKey(orderId) || key.startsWith(`${refundKey(orderId)}:`);

/**
 * A refund that definitely failed (the provider refused it, or has no record of it: the money did
 * not move) is asked for again under a new key, `{key}:attempt-{n}`, at most this many times in all;
 * then the order needs attention. Reusing the old key would only get the old answer back.
 */
export const MAX_REFUND_ATTEMPTS = 3;
const ATTEMPT = /:attempt-(\d+)$/;
const attemptRefundKey = (base: string, attempt: number) => (attempt <= 1 ? base : `${base}:attempt-${attempt}`);
/** The refund a key is an attempt of (its first key). */
export const refundBase = (key: string): string => key.replace(ATTEMPT, "");

/** The attempts of each refund, in order, by first key. */
export function refundSlots(state: OrderState): Map<string, RefundState[]> {
  const slots = new Map<string, RefundState[]>();
  for (const r of state.refunds) slots.set(refundBase(r.key), [...(slots.get(refundBase(r.key)) ?? []), r]);
  return slots;
}

/** Refunds whose last attempt definitely failed with no attempt left: the order needs a person. */
export const refundsFailedForGood = (state: OrderState): RefundState[] =>
  [...refundSlots(state).values()].flatMap((attempts) => {
    const last = attempts[attempts.length - 1];
    return last?.status === "Failed" && attempts.length >= MAX_REFUND_ATTEMPTS ? [last] : [];
  });

/** Refunds asked for and not definitely failed: money that is, or may be, on its way back. */
export const committedRefunds = (state: OrderState): number =>
  state.refunds.filter((r) => r.status !== "Failed").reduce((sum, r) => sum + r.amount, 0);

/** What is left of the charge to refund; 0 before the payment completed. */
export function refundable(state: OrderState): number {
  if (state.payment.status !== "Completed" || !state.details) return 0;
  return Math.max(0, state.details.amount - committedRefunds(state));
}

/** The amount of some lines at the order's prices (a sku the order lacks counts 0; never more than ordered). */
export function linesAmount(state: OrderState, lines: readonly { sku: string; quantity: number }[]): number {
  const ordered = state.details?.lines ?? [];
  return lines.reduce((sum, line) => {
    const match = ordered.find((o) => o.sku === line.sku);
    return match ? sum + Math.min(line.quantity, match.quantity) * match.unitPrice : sum;
  }, 0);
}

/** Whether the whole order is to be refunded: it was cancelled, or the warehouse refused it. */
export const fullRefundCause = (state: OrderState): RefundCause | undefined =>
  state.cancellation ? "cancelled" : state.stock.rejected !== null ? "out-of-stock" : undefined;

/**
 * The refunds a state calls for and has not asked for yet, with the events and effects that ask:
 * only once paid (a cancellation before payment is answered by a refund when the charge
 * completes, by nothing when it fails), each key once, each within what is left.
 */
export function dueRefunds(state: OrderState, orderId: string, events: OrderEvent[], effects: EffectRequest[]): void {
  const paymentId = state.payment.resultId;
  if (state.payment.status !== "Completed" || paymentId === null) return;
  let left = refundable(state);
  const slots = refundSlots(state);
  const ask = (base: string, wanted: number, cause: RefundCause) => {
    const attempts = slots.get(base) ?? [];
    const last = attempts[attempts.length - 1];
    // Asked for and not definitely failed (or out of attempts): nothing to ask.
    if (last && (last.status !== "Failed" || attempts.length >= MAX_REFUND_ATTEMPTS)) return;
    // Again after a definite failure: the same amount, within what is left.
    const amount = Math.min(left, last ? last.amount : wanted);
    if (amount <= 0) return;
    const key = attemptRefundKey(base, attempts.length + 1);
    events.push({ type: "RefundRequested", key, paymentId, amount, cause });
    const input: RefundInput = { paymentId, amount };
    effects.push({ kind: EFFECT_KINDS.refund, key, input });
    left -= amount;
  };
  const full = fullRefundCause(state);
  if (full) {
    ask(refundKey(orderId), left, full);
    // A partial refund asked for before the full one was still on its way then, so the full one
    // took only the rest: should it definitely fail now, nothing else gives its amount back. It
    // is asked again (its own key's next attempt); one never asked for is covered by the full one.
    // (The shop's simulator found an order cancelled while such a refund was pending.)
    for (const { adjustmentId } of state.stock.shortages) {
      const base = refundKey(orderId, adjustmentId);
      if (slots.has(base)) ask(base, 0, "lines-unavailable");
    }
    return;
  }
  for (const { adjustmentId, lines } of state.stock.shortages) {
    ask(refundKey(orderId, adjustmentId), Math.min(left, linesAmount(state, lines)), "lines-unavailable");
  }
}

/** Every refund's last attempt has completed, and none is due: the compensation is done. */
export function refundsSettled(state: OrderState): boolean {
  const due: OrderEvent[] = [];
  dueRefunds(state, state.orderId, due, []);
  const lasts = [...refundSlots(state).values()].map((attempts) => attempts[attempts.length - 1]);
  return due.length === 0 && lasts.every((r) => r?.status === "Completed");
}

/** Applies a refund event (requested or an outcome of its key); other events leave refunds as they are. */
export function applyRefund(refunds: RefundState[], stage: Stage, event: OrderEvent): RefundState[] {
  if (event.type === "RefundRequested") {
    if (refunds.some((r) => r.key === event.key)) return refunds;
    return [
      ...refunds,
      { ...notRequested(), status: "Pending", key: event.key, amount: event.amount, cause: event.cause },
    ];
  }
  if (stage === "requested" || !("key" in event)) return refunds;
  return refunds.map((r) =>
    r.key === event.key && !isFinalStatus(r.status) ? { ...r, ...applyStage(r, stage, event) } : r,
  );
}

/** The stage of a refund event, or undefined when the event is not one. */
export const REFUND_STAGE: ReadonlyMap<string, Stage> = new Map<string, Stage>([
  ["RefundRequested", "requested"],
  ["RefundCompleted", "completed"],
  ["RefundFailed", "failed"],
  ["RefundUnknown", "unknown"],
  ["RefundNeedsReconciliation", "reconcile"],
]);
