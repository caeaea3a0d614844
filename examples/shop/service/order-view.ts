import type { EffectStatus, EventRecord, Journal } from "oncely";
import { parseAddress } from "oncely";
import type { EffectFact } from "../ordering/effects.js";
import { EVENT_STAGE, FACT_STREAM, type RefundCause, type Via } from "../ordering/events.js";
import type { CancellationState, EffectFactState, OrderState, StockState } from "../ordering/state.js";
import { attentionReasons, deriveStatus, type OrderStatus } from "../ordering/status.js";

/**
 * What `GET /orders/:id` answers: the order's facts, its derived status, the providers' ids and
 * the event history. Computed at read time from the state and the events (nothing stored).
 *
 * The history is the operator's view across contexts: the order's own stream and the streams of
 * its payment (`payment/{id}`) and shipment (`shipment/{id}`), each entry naming its stream, in
 * stream order (stream by stream: versions of different streams are not comparable).
 */

export interface EffectFactView {
  status: EffectStatus;
  /** How the final outcome was learned: run, lookup (asked the provider by key) or operator. */
  via?: Via;
  reason?: string;
  lastError?: string;
  needsReconciliation?: boolean;
}

export interface OrderView {
  orderId: string;
  status: OrderStatus;
  /** Why the order needs attention (empty unless status is `attention`). */
  attention: string[];
  customerEmail: string | null;
  currency: string | null;
  amount: number | null;
  lines: { sku: string; quantity: number; unitPrice: number }[];
  payment: EffectFactView & { paymentId?: string };
  confirmationEmail: EffectFactView & { messageId?: string };
  picklist: EffectFactView & { picklistId?: string };
  shipping: { status: EffectStatus; shipmentId?: string; eventId?: string; occurredAt?: string };
  shippingEmail: EffectFactView & { messageId?: string };
  /** Null unless cancelled; `shippedBeforeCancel` when the warehouse shipped first. */
  cancellation: CancellationState | null;
  stock: StockState;
  refunds: (EffectFactView & { key: string; amount: number; cause: RefundCause; refundId?: string })[];
  cancellationEmail: EffectFactView & { messageId?: string };
  stockEmail: EffectFactView & { messageId?: string };
  /** Version of the order's own stream. */
  version: number;
  history: HistoryEntry[];
}

export interface HistoryEntry {
  stream: string;
  version: number;
  type: string;
  recordedAt: string;
  data: unknown;
}

export function orderView(state: OrderState, events: EventRecord[]): OrderView {
  const vias = viaByFact(events);
  const refundVias = new Map(
    events
      .filter((e) => e.type === "RefundCompleted" || e.type === "RefundFailed")
      .map((e) => [(e.data as { key: string }).key, (e.data as { via: Via }).via]),
  );
  const fact = (f: EffectFactState, idField: string, via: Via | undefined) => ({
    status: f.status,
    ...(f.resultId === null ? {} : { [idField]: f.resultId }),
    ...(via === undefined ? {} : { via }),
    ...(f.reason === null ? {} : { reason: f.reason }),
    ...(f.lastError === null || f.status === "Completed" || f.status === "Failed" ? {} : { lastError: f.lastError }),
    ...(f.needsReconciliation ? { needsReconciliation: true } : {}),
  });
  const details = state.details;
  return {
    orderId: state.orderId,
    // A stream with events always has a status; "attention" covers facts that make no sense together.
    status: deriveStatus(state) ?? "attention",
    attention: attentionReasons(state),
    customerEmail: details?.customerEmail ?? null,
    currency: details?.currency ?? null,
    amount: details?.amount ?? null,
    lines: details?.lines ?? [],
    payment: fact(state.payment, "paymentId", vias.payment),
    confirmationEmail: fact(state.confirmationEmail, "messageId", vias.confirmationEmail),
    picklist: fact(state.picklist, "picklistId", vias.picklist),
    shipping: {
      status: state.shipping.status,
      ...(state.shipping.shipmentId === null ? {} : { shipmentId: state.shipping.shipmentId }),
      ...(state.shipping.eventId === null ? {} : { eventId: state.shipping.eventId }),
      ...(state.shipping.occurredAt === null ? {} : { occurredAt: state.shipping.occurredAt }),
    },
    shippingEmail: fact(state.shippingEmail, "messageId", vias.shippingEmail),
    cancellation: state.cancellation,
    stock: state.stock,
    refunds: state.refunds.map((r) => ({
      key: r.key,
      amount: r.amount,
      cause: r.cause,
      ...fact(r, "refundId", refundVias.get(r.key)),
    })),
    cancellationEmail: fact(state.cancellationEmail, "messageId", vias.cancellationEmail),
    stockEmail: fact(state.stockEmail, "messageId", vias.stockEmail),
    version: events.filter((e) => parseAddress(e.stream).type === "order").reduce((v, e) => Math.max(v, e.version), 0),
    history: events.map((e) => ({
      stream: e.stream,
      version: e.version,
      type: e.type,
      recordedAt: new Date(e.recordedAt).toISOString(),
      data: e.data,
    })),
  };
}

/**
 * The `via` of each effect's final event, read in the stream that owns the effect (the first one
 * wins, as in evolve; for a picklist or a mail asked for again, the last request's, which is the
 * attempt the fact shows: each earlier attempt ended Failed before the next was asked for).
 */
function viaByFact(events: EventRecord[]) {
  const vias: Partial<Record<EffectFact, Via>> = {};
  for (const record of events) {
    const staged = EVENT_STAGE.get(record.type);
    if (!staged || (staged.stage !== "completed" && staged.stage !== "failed")) continue;
    if (FACT_STREAM[staged.fact] !== parseAddress(record.stream).type) continue;
    if (vias[staged.fact] !== undefined && staged.fact === "payment") continue;
    const via = (record.data as { via?: Via }).via;
    if (via) vias[staged.fact] = via;
  }
  return vias;
}

/** The events of an order across its contexts' streams: order, payment, shipment. */
export async function orderHistory(journal: Journal, orderId: string): Promise<EventRecord[]> {
  const streams = [`order/${orderId}`, `payment/${orderId}`, `shipment/${orderId}`];
  return (await Promise.all(streams.map((s) => journal.readStream(s)))).flat();
}
