import type { FastifyReply, FastifyRequest } from "fastify";
import { type Clock, type IdGenerator, systemClock } from "oncely";
import { seededRandom } from "oncely/testing";
import { z } from "zod";
import { baseFaultsShape, drawFaults, type FaultPlan, FaultSettings, noBaseFaults } from "../shared/faults.js";
import {
  badRequest,
  canonicalJson,
  createProviderApp,
  injectedFailure,
  keyedRequest,
  lookupKeyOf,
} from "../shared/http.js";
import { JsonlLedger } from "../shared/ledger.js";
import { SIGNATURE_HEADER, signWebhook } from "../shared/webhook-signature.js";

/**
 * A fake warehouse: accepts a picklist once per `Idempotency-Key`, ships it once after a delay,
 * and tells the shop through a webhook that it may deliver late and more than once (the seed's
 * "integration events arrive late, twice or out of order"). Now and then (`shortShipRate`) it
 * finds lines of an accepted picklist it cannot ship: it reports them first (a `LinesUnavailable`
 * webhook, one adjustment), then ships the rest. And now and then (`lostWebhookRate`) the webhooks of
 * a shipment never reach the shop at all (as when the warehouse gives up on its retries while the
 * shop restarts): the shop then learns of the shipment only by asking, `GET /shipments?idempotencyKey=K`.
 */

export const warehouseFaultsSchema = z.strictObject({
  ...baseFaultsShape,
  /** Fraction of shipments whose webhook is delivered a second time (same eventId). */
  duplicateRate: z.number().min(0).max(1),
  /** Fraction of shipments whose webhook is held back `lateMs` after shipping. */
  lateRate: z.number().min(0).max(1),
  lateMs: z.number().int().min(0),
  /** Fraction of new picklists refused for good (422, out of stock), drawn from the seeded random. */
  outOfStockRate: z.number().min(0).max(1),
  /**
   * Fraction of accepted picklists of which the warehouse later reports lines it cannot ship (a
   * `LinesUnavailable` webhook, then the rest ships). Drawn from the seeded random at acceptance.
   */
  shortShipRate: z.number().min(0).max(1),
  /**
   * Fraction of accepted picklists whose webhooks (the shipment's, and the shortage's if any) are
   * lost for good: never sent, recorded in the ledger as `lost`. Drawn from the seeded random at
   * acceptance and kept with the picklist, so a restarted warehouse does not send them either.
   */
  lostWebhookRate: z.number().min(0).max(1),
  /**
   * Fraction of short picklists whose `LinesUnavailable` webhook alone is lost for good while the
   * shipment's webhook arrives (it names the adjustment, so the shop can ask for its lines). Drawn
   * at acceptance, kept with the picklist.
   */
  lostShortageWebhookRate: z.number().min(0).max(1),
});
export type WarehouseFaults = z.infer<typeof warehouseFaultsSchema>;
export const noWarehouseFaults: WarehouseFaults = {
  ...noBaseFaults,
  duplicateRate: 0,
  lateRate: 0,
  lateMs: 0,
  outOfStockRate: 0,
  shortShipRate: 0,
  lostWebhookRate: 0,
  lostShortageWebhookRate: 0,
};

export const picklistRequestSchema = z.strictObject({
  orderId: z.string().min(1, "must not be empty"),
  lines: z
    .array(
      z.strictObject({
        sku: z.string().min(1, "must not be empty"),
        quantity: z.number().int("must be an integer").positive("must be positive"),
      }),
    )
    .min(1, "must hold at least one line"),
});
export type PicklistRequest = z.infer<typeof picklistRequestSchema>;
export const picklistCancellationSchema = z.strictObject({ orderId: z.string().min(1, "must not be empty") });

export type PicklistLine = PicklistRequest["lines"][number];
export interface Picklist extends PicklistRequest {
  picklistId: string;
  idempotencyKey: string;
  at: string;
  /**
   * What the warehouse will find it cannot ship, drawn at acceptance and kept with the picklist so
   * a restarted warehouse reports the same shortage (never a different one under the same picklist).
   */
  unavailable?: PicklistLine[];
  /** Its webhooks are never sent (`lostWebhookRate`): the shop must ask. Drawn at acceptance. */
  webhooksLost?: true;
  /** Only its shortage's webhook is never sent (`lostShortageWebhookRate`). Drawn at acceptance. */
  shortageWebhookLost?: true;
}
export interface Shipment {
  shipmentId: string;
  picklistId: string;
  orderId: string;
  /** Stable id of the OrderShipped webhook: every delivery of this shipment carries it. */
  eventId: string;
  /** What left the warehouse: the picklist's lines less those reported unavailable (absent in older ledgers). */
  lines?: PicklistLine[];
  at: string;
}
/** Lines of an accepted picklist the warehouse reported it cannot ship: one adjustment. */
export interface Shortage {
  adjustmentId: string;
  picklistId: string;
  orderId: string;
  lines: PicklistLine[];
  /** Stable id of the LinesUnavailable webhook: every delivery of this shortage carries it. */
  eventId: string;
  at: string;
}
export interface WebhookAttempt {
  eventId: string;
  /** The shipment the webhook announces, or the adjustment for a shortage. */
  shipmentId?: string;
  adjustmentId?: string;
  attempt: number;
  /** Which delivery of the event this is: 1, or 2 for an injected duplicate. */
  delivery: number;
  /** `lost`: never sent (`lostWebhookRate`), as if every retry had been given up on. */
  outcome: "delivered" | "rejected" | "error" | "gave-up" | "lost";
  status?: number;
  error?: string;
  at: string;
}
/** A picklist refused for good: nothing of it will ship. */
export interface Stockout extends PicklistRequest {
  idempotencyKey: string;
  reason: string;
  at: string;
}
/** An order whose picklists the shop cancelled before any shipped: none of them ships. */
export interface PicklistCancellation {
  orderId: string;
  idempotencyKey: string;
  picklistIds: string[];
  at: string;
}
export interface WarehouseLedger extends Record<string, object[]> {
  picklists: Picklist[];
  shipments: Shipment[];
  webhooks: WebhookAttempt[];
  stockouts: Stockout[];
  cancellations: PicklistCancellation[];
  shortages: Shortage[];
}

/** What the shop receives at `POST {shopUrl}/webhooks/warehouse`. */
export interface OrderShippedWebhook {
  eventId: string;
  type: "OrderShipped";
  orderId: string;
  shipmentId: string;
  occurredAt: string;
  /**
   * The adjustments (`LinesUnavailable`) reported for this picklist before it shipped; absent when
   * none. A shop that never heard of one asks for it (`GET /shipments?idempotencyKey=`).
   */
  adjustmentIds?: string[];
}
/** Also at `POST {shopUrl}/webhooks/warehouse`, before the OrderShipped of the rest. */
export interface LinesUnavailableWebhook {
  eventId: string;
  type: "LinesUnavailable";
  orderId: string;
  adjustmentId: string;
  lines: PicklistLine[];
  occurredAt: string;
}
export type WarehouseWebhook = OrderShippedWebhook | LinesUnavailableWebhook;

export interface WebhookRetry {
  /** Per delivery attempt. Default 2000. */
  timeoutMs: number;
  /** Attempts per delivery before giving up (recorded in the ledger). Default 10. */
  maxAttempts: number;
  /** First delay between attempts; doubles up to `maxBackoffMs`. Default 50. */
  backoffMs: number;
  maxBackoffMs: number;
}

export interface WarehouseProviderOptions {
  port?: number;
  host?: string;
  seed?: number;
  faults?: Partial<WarehouseFaults>;
  ledgerPath?: string | undefined;
  /** Base URL of the shop that receives the webhook. May be set later with `setShopUrl`. */
  shopUrl?: string | undefined;
  /** Shared with the shop: every webhook call is signed with it (`Oncely-Signature`). */
  webhookSecret: string;
  /** Time from picklist to shipment. Default 50. */
  shipDelayMs?: number | undefined;
  webhook?: Partial<WebhookRetry>;
  clock?: Clock;
  ids?: IdGenerator;
}

export interface WarehouseProvider {
  url: string;
  ledger: WarehouseLedger;
  faults(): WarehouseFaults;
  setFaults(faults: Partial<WarehouseFaults>): WarehouseFaults;
  setShopUrl(url: string): void;
  /** Resolves when every scheduled shipment and webhook delivery has finished (for tests and audits). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export async function startWarehouseProvider(options: WarehouseProviderOptions): Promise<WarehouseProvider> {
  const clock = options.clock ?? systemClock;
  const random = seededRandom(options.seed ?? 1);
  const faults = new FaultSettings(warehouseFaultsSchema, noWarehouseFaults, options.faults);
  const ledger = new JsonlLedger<WarehouseLedger>(
    ["picklists", "shipments", "webhooks", "stockouts", "cancellations", "shortages"],
    options.ledgerPath,
  );
  const retry: WebhookRetry = {
    timeoutMs: 2000,
    maxAttempts: 10,
    backoffMs: 50,
    maxBackoffMs: 2000,
    ...options.webhook,
  };
  const shipDelayMs = options.shipDelayMs ?? 50;
  let shopUrl = options.shopUrl;
  let picklistCounter = ledger.data.picklists.length;
  let shipmentCounter = ledger.data.shipments.length;
  const ids = options.ids ?? {
    next: () => `pick_${String(++picklistCounter).padStart(6, "0")}`,
  };
  const shipmentIds = { next: () => `ship_${String(++shipmentCounter).padStart(6, "0")}` };

  const byKey = new Map<string, { request: string; picklist: Picklist }>();
  const remember = (picklist: Picklist) => {
    const { orderId, lines } = picklist;
    byKey.set(picklist.idempotencyKey, { request: canonicalJson({ orderId, lines }), picklist });
  };
  for (const picklist of ledger.data.picklists) remember(picklist);
  const shipmentOf = (picklistId: string) => ledger.data.shipments.find((s) => s.picklistId === picklistId);
  const cancelled = (orderId: string) => ledger.data.cancellations.some((c) => c.orderId === orderId);
  /** Refusals per key, replayed like any answer (a refusal is final). */
  const stockoutByKey = new Map(ledger.data.stockouts.map((s) => [s.idempotencyKey, s]));

  const provider = createProviderApp({ name: "warehouse", faults, clock, ledger: () => ledger.data });
  const { app, closing } = provider;
  const inFlight = new Set<Promise<void>>();
  const track = (task: Promise<void>) => {
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  };

  const record = (entry: Omit<WebhookAttempt, "at">) =>
    ledger.append("webhooks", { ...entry, at: new Date(clock.now()).toISOString() });

  /** One delivery of a webhook: retried with backoff until a 2xx, or until `maxAttempts`. */
  const deliver = async (payload: WarehouseWebhook, delivery: number) => {
    let delay = retry.backoffMs;
    for (let attempt = 1; attempt <= retry.maxAttempts; attempt++) {
      const base = attemptOf(payload, attempt, delivery);
      if (shopUrl === undefined) {
        record({ ...base, outcome: "error", error: "no shop URL configured" });
      } else {
        try {
          const body = JSON.stringify(payload);
          const response = await fetch(`${shopUrl}/webhooks/warehouse`, {
            method: "POST",
            // Signed at each attempt: a retry an hour later is not refused as stale.
            headers: {
              "content-type": "application/json",
              [SIGNATURE_HEADER]: signWebhook(options.webhookSecret, body, clock.now()),
            },
            body,
            signal: AbortSignal.any([closing, AbortSignal.timeout(retry.timeoutMs)]),
          });
          await response.arrayBuffer().catch(() => undefined);
          if (response.ok) {
            record({ ...base, outcome: "delivered", status: response.status });
            return;
          }
          record({ ...base, outcome: "rejected", status: response.status });
        } catch (error) {
          if (closing.aborted) return;
          record({ ...base, outcome: "error", error: error instanceof Error ? error.message : String(error) });
        }
      }
      if (attempt === retry.maxAttempts) break;
      await clock.sleep(delay, closing);
      delay = Math.min(delay * 2, retry.maxBackoffMs);
    }
    record({ ...attemptOf(payload, retry.maxAttempts, delivery), outcome: "gave-up" });
  };

  /** Ships a picklist once, then delivers its webhook (late and/or twice, as drawn at acceptance). */
  const ship = async (picklist: Picklist, plan: { late: boolean; duplicate: boolean }) => {
    try {
      await clock.sleep(shipDelayMs, closing);
      let shipment = shipmentOf(picklist.picklistId);
      // Cancelled before it shipped: it never ships (checked here and in the cancel, one process: no gap between).
      if (!shipment && cancelled(picklist.orderId)) return;
      // The shortage is found while picking, so it is reported (and recorded, once) before the rest ships.
      const shortage = picklist.unavailable?.length ? shortageOf(picklist) : undefined;
      if (!shipment) {
        const shipmentId = shipmentIds.next();
        shipment = {
          shipmentId,
          picklistId: picklist.picklistId,
          orderId: picklist.orderId,
          eventId: `warehouse:${shipmentId}:shipped`,
          lines: remainingLines(picklist.lines, picklist.unavailable ?? []),
          at: new Date(clock.now()).toISOString(),
        };
        ledger.append("shipments", shipment);
      }
      const adjustmentIds = shortage ? [shortage.adjustmentId] : [];
      if (picklist.webhooksLost) {
        // Lost for good: the ledger says so, the shop hears nothing and must ask (GET /shipments).
        if (shortage) record({ ...attemptOf(shortageWebhook(shortage), 0, 1), outcome: "lost" });
        record({ ...attemptOf(shippedWebhook(shipment, adjustmentIds), 0, 1), outcome: "lost" });
        return;
      }
      if (plan.late) await clock.sleep(faults.get().lateMs, closing);
      if (shortage && picklist.shortageWebhookLost) {
        // Only the shortage's report is lost: the shipment's webhook names it, and the shop asks for its lines.
        if (!ledger.data.webhooks.some((w) => w.eventId === shortage.eventId)) {
          record({ ...attemptOf(shortageWebhook(shortage), 0, 1), outcome: "lost" });
        }
      } else if (shortage) {
        // Delivered until acknowledged before the OrderShipped (a crash of the warehouse in between
        // delivers it again at restart: the shop's inbox drops the repeat by eventId).
        const report = shortageWebhook(shortage);
        await deliver(report, 1);
        if (plan.duplicate) await deliver(report, 2);
      }
      const payload = shippedWebhook(shipment, adjustmentIds);
      await deliver(payload, 1);
      if (plan.duplicate) await deliver(payload, 2);
    } catch (error) {
      // Closing interrupts the timers; the ledger file lets a restarted warehouse carry on.
      if (!closing.aborted) throw error;
    }
  };

  /** The picklist's one shortage, recorded the first time it is needed (a restart finds it in the ledger). */
  const shortageOf = (picklist: Picklist): Shortage => {
    const known = ledger.data.shortages.find((s) => s.picklistId === picklist.picklistId);
    if (known) return known;
    const adjustmentId = `adj_${picklist.picklistId}`;
    const shortage: Shortage = {
      adjustmentId,
      picklistId: picklist.picklistId,
      orderId: picklist.orderId,
      lines: picklist.unavailable ?? [],
      eventId: `warehouse:${adjustmentId}:lines-unavailable`,
      at: new Date(clock.now()).toISOString(),
    };
    ledger.append("shortages", shortage);
    return shortage;
  };

  /**
   * Which lines of a new picklist will turn out unavailable: none unless the draw falls under
   * `shortShipRate`. Something always ships, so a picklist of a single item is never short. The
   * random is only consumed when the knob is on, so seeded runs without it draw as they always did.
   */
  const drawShortage = (lines: readonly PicklistLine[]): PicklistLine[] | undefined => {
    if (faults.get().shortShipRate <= 0) return undefined;
    const short = random.next() < faults.get().shortShipRate;
    const pick = random.next();
    if (!short) return undefined;
    if (lines.length > 1) {
      const line = lines[Math.floor(pick * lines.length)] as PicklistLine;
      return [{ sku: line.sku, quantity: line.quantity }];
    }
    const only = lines[0] as PicklistLine;
    if (only.quantity < 2) return undefined;
    return [{ sku: only.sku, quantity: 1 + Math.floor(pick * (only.quantity - 1)) }];
  };

  /** Whether a new picklist's webhooks will be lost; the random is only consumed when the knob is on. */
  const drawLost = (): boolean => {
    const rate = faults.get().lostWebhookRate;
    return rate > 0 && random.next() < rate;
  };
  /** Whether a short picklist's shortage webhook alone will be lost; as `drawLost`. */
  const drawShortageLost = (unavailable: PicklistLine[] | undefined): boolean => {
    const rate = faults.get().lostShortageWebhookRate;
    return unavailable !== undefined && rate > 0 && random.next() < rate;
  };

  const drawShipping = () => {
    const current = faults.get();
    const late = random.next() < current.lateRate;
    const duplicate = random.next() < current.duplicateRate;
    return { late, duplicate };
  };

  // A restarted warehouse finishes what its predecessor left: unshipped picklists, undelivered webhooks.
  for (const picklist of ledger.data.picklists) {
    const shipment = shipmentOf(picklist.picklistId);
    const shortage = ledger.data.shortages.find((s) => s.picklistId === picklist.picklistId);
    // Lost for good: once shipped, nothing of it is sent again.
    if (picklist.webhooksLost && shipment) continue;
    const acknowledged = (eventId: string) =>
      ledger.data.webhooks.some((w) => w.eventId === eventId && w.outcome === "delivered");
    // A shortage given up on is reported again too, even once its shipment's webhook got through.
    const delivered =
      shipment !== undefined &&
      acknowledged(shipment.eventId) &&
      (picklist.unavailable === undefined ||
        (shortage !== undefined && (picklist.shortageWebhookLost === true || acknowledged(shortage.eventId))));
    if (!delivered) track(ship(picklist, { late: false, duplicate: false }));
  }

  const refuse = (request: FastifyRequest, reply: FastifyReply, plan: FaultPlan, reason: string) =>
    provider.answer(request, reply, plan, 422, { status: "refused", reason });

  app.post("/picklists", async (request, reply) => {
    const parsed = keyedRequest(request, reply, picklistRequestSchema);
    if (!parsed) return reply;
    const { key, body } = parsed;
    const plan = drawFaults(faults.get(), random);
    const shipping = drawShipping();
    const stockDraw = random.next();
    const unavailable = drawShortage(body.lines);
    const lost = drawLost();
    const shortageLost = drawShortageLost(unavailable);
    if (plan.fail) return injectedFailure(reply);

    const refused = stockoutByKey.get(key);
    if (refused) return refuse(request, reply, plan, refused.reason);
    const prior = byKey.get(key);
    if (prior) {
      const first = { request: prior.request, status: 202, body: { picklistId: prior.picklist.picklistId } };
      return provider.replay(request, reply, plan, key, first, body);
    }
    if (cancelled(body.orderId)) return refuse(request, reply, plan, `order ${body.orderId} was cancelled`);
    if (stockDraw < faults.get().outOfStockRate) {
      const stockout: Stockout = {
        idempotencyKey: key,
        ...body,
        reason: `out of stock: ${body.lines.map((l) => l.sku).join(", ")}`,
        at: new Date(clock.now()).toISOString(),
      };
      ledger.append("stockouts", stockout);
      stockoutByKey.set(key, stockout);
      return refuse(request, reply, plan, stockout.reason);
    }
    const picklist: Picklist = {
      picklistId: ids.next(),
      idempotencyKey: key,
      ...body,
      at: new Date(clock.now()).toISOString(),
      ...(unavailable ? { unavailable } : {}),
      ...(lost ? { webhooksLost: true as const } : {}),
      ...(shortageLost ? { shortageWebhookLost: true as const } : {}),
    };
    ledger.append("picklists", picklist);
    remember(picklist);
    // Shipping is scheduled once, when the picklist is first accepted: a replayed request never ships again.
    track(ship(picklist, shipping));
    return provider.answer(request, reply, plan, 202, { picklistId: picklist.picklistId });
  });

  app.get("/picklists", async (request, reply) => {
    const key = lookupKeyOf(request);
    if (!key.ok) return reply.code(400).send(badRequest(key.issues));
    const found = byKey.get(key.value);
    if (!found) return reply.code(404).send({ error: `no picklist for Idempotency-Key "${key.value}"` });
    const shipment = shipmentOf(found.picklist.picklistId);
    return {
      picklistId: found.picklist.picklistId,
      status: shipment ? "shipped" : "accepted",
      orderId: found.picklist.orderId,
      lines: found.picklist.lines,
      ...(shipment ? { shipmentId: shipment.shipmentId } : {}),
    };
  });

  /**
   * What became of the picklist sent under key K, as its webhooks say it (or would have said it):
   * `shipped` with the shipment's `OrderShipped` and the shortage's `LinesUnavailable` (the same
   * event ids, shipment ids and times as the webhooks), `cancelled` when the order was cancelled
   * before it shipped, `accepted` while it waits to ship; 404 when the warehouse has no picklist
   * under K. The shop asks when a shipment's webhook is overdue.
   */
  app.get("/shipments", async (request, reply) => {
    const key = lookupKeyOf(request);
    if (!key.ok) return reply.code(400).send(badRequest(key.issues));
    const found = byKey.get(key.value);
    if (!found) return reply.code(404).send({ error: `no picklist for Idempotency-Key "${key.value}"` });
    const { picklistId, orderId } = found.picklist;
    const shipment = shipmentOf(picklistId);
    if (!shipment) return { status: cancelled(orderId) ? "cancelled" : "accepted", orderId, picklistId };
    const shortages = ledger.data.shortages.filter((s) => s.picklistId === picklistId);
    return {
      status: "shipped",
      orderId,
      picklistId,
      shipment: shippedWebhook(
        shipment,
        shortages.map((s) => s.adjustmentId),
      ),
      adjustments: shortages.map(shortageWebhook),
    };
  });

  /**
   * Cancels every picklist of an order that has not shipped, and refuses any later one: 200 with
   * the ids, or 422 when one already shipped (too late: the shop records shipped-before-cancel).
   * Once per key; a repeat answers the same.
   */
  app.post("/picklist-cancellations", async (request, reply) => {
    const parsed = keyedRequest(request, reply, picklistCancellationSchema);
    if (!parsed) return reply;
    const { key, body } = parsed;
    const plan = drawFaults(faults.get(), random);
    if (plan.fail) return injectedFailure(reply);
    const prior = ledger.data.cancellations.find((c) => c.idempotencyKey === key);
    if (prior) return provider.answer(request, reply, plan, 200, { cancelled: prior.picklistIds });
    const picklists = ledger.data.picklists.filter((p) => p.orderId === body.orderId);
    const shipped = picklists.map((p) => shipmentOf(p.picklistId)).find((s) => s !== undefined);
    if (shipped) return refuse(request, reply, plan, `already shipped as ${shipped.shipmentId}`);
    const entry: PicklistCancellation = {
      orderId: body.orderId,
      idempotencyKey: key,
      picklistIds: picklists.map((p) => p.picklistId),
      at: new Date(clock.now()).toISOString(),
    };
    ledger.append("cancellations", entry);
    return provider.answer(request, reply, plan, 200, { cancelled: entry.picklistIds });
  });

  app.get("/picklist-cancellations", async (request, reply) => {
    const key = lookupKeyOf(request);
    if (!key.ok) return reply.code(400).send(badRequest(key.issues));
    const found = ledger.data.cancellations.find((c) => c.idempotencyKey === key.value);
    if (!found) return reply.code(404).send({ error: `no cancellation for Idempotency-Key "${key.value}"` });
    return { status: "cancelled", orderId: found.orderId, cancelled: found.picklistIds };
  });

  const url = await provider.listen(options.host ?? "127.0.0.1", options.port ?? 0);
  return {
    url,
    ledger: ledger.data,
    faults: () => faults.get(),
    setFaults: (update) => faults.set(update),
    setShopUrl: (next) => {
      shopUrl = next;
    },
    async settled() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    async close() {
      await provider.close();
      await Promise.allSettled([...inFlight]);
    },
  };
}

function attemptOf(payload: WarehouseWebhook, attempt: number, delivery: number) {
  const subject =
    payload.type === "OrderShipped" ? { shipmentId: payload.shipmentId } : { adjustmentId: payload.adjustmentId };
  return { eventId: payload.eventId, ...subject, attempt, delivery };
}

/** The shipment's webhook; it names the adjustments reported before it (absent when none). */
const shippedWebhook = (shipment: Shipment, adjustmentIds: readonly string[]): OrderShippedWebhook => ({
  eventId: shipment.eventId,
  type: "OrderShipped",
  orderId: shipment.orderId,
  shipmentId: shipment.shipmentId,
  occurredAt: shipment.at,
  ...(adjustmentIds.length > 0 ? { adjustmentIds: [...adjustmentIds] } : {}),
});

const shortageWebhook = (shortage: Shortage): LinesUnavailableWebhook => ({
  eventId: shortage.eventId,
  type: "LinesUnavailable",
  orderId: shortage.orderId,
  adjustmentId: shortage.adjustmentId,
  lines: shortage.lines,
  occurredAt: shortage.at,
});

/** The lines less the unavailable quantities (a line with nothing left is dropped). */
export function remainingLines(lines: readonly PicklistLine[], unavailable: readonly PicklistLine[]): PicklistLine[] {
  return lines.flatMap((line) => {
    const missing = unavailable.filter((u) => u.sku === line.sku).reduce((n, u) => n + u.quantity, 0);
    const quantity = line.quantity - missing;
    return quantity > 0 ? [{ sku: line.sku, quantity }] : [];
  });
}
