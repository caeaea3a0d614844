import type {
  Clock,
  CommandRouter,
  Dispatcher,
  IdGenerator,
  Journal,
  Logger,
  Reconciliation,
  Runtime,
  SendOptions,
  Typed,
} from "oncely";
import { InvalidInputError } from "oncely";
import type { Registry } from "prom-client";
import type { ShopContexts } from "../contexts.js";
import { orderIdSchema } from "../integration/order-id.js";
import type { OrderStatuses, OrderSummary } from "./order-statuses.js";

/** Everything the routes need, passed in: no globals, so two shops can live in one test. */
export interface ShopContext {
  runtime: Runtime;
  /** Present when this worker owns some slices only: commands go to the worker owning their actor. */
  router?: CommandRouter | undefined;
  journal: Journal;
  reconciliation: Reconciliation;
  /** Absent when this process serves HTTP only (another process dispatches). */
  dispatcher?: Dispatcher;
  /** The relay and consumers of integration events, when this process runs them. */
  contexts?: ShopContexts;
  /** Order ids for requests without an Idempotency-Key. */
  ids: IdGenerator;
  logger: Logger;
  /** The shop's clock: webhook timestamps are checked against it. */
  clock: Clock;
  startedAt: number;
  /** Served at GET /metrics (Prometheus text format); absent: no /metrics route. */
  registry?: Registry;
  /** The orders' statuses for the listings (`listOrders`), kept between calls. */
  orderStatuses: OrderStatuses;
}

export const ORDER_STATUSES = [
  "placed",
  "paid",
  "shipped",
  "completed",
  "payment_failed",
  "cancelled",
  "out_of_stock",
  "refunding",
  "attention",
] as const;

/** One order id format over HTTP and on the bus (see `integration/order-id.ts`). */
export { orderIdSchema };

export const orderAddress = (orderId: string) => `order/${orderId}`;

/** Send a command from a route: through the router when this worker owns some slices only. */
export function sendCommand(
  ctx: ShopContext,
  address: string,
  command: Typed,
  options: SendOptions,
): Promise<{ reply: unknown; duplicate: boolean }> {
  return ctx.router ? ctx.router.send(address, command, options) : ctx.runtime.send(address, command, options);
}

export function parseOrderId(value: unknown, field = "orderId"): string {
  const parsed = orderIdSchema.safeParse(value);
  if (!parsed.success)
    throw new InvalidInputError("invalid order id", [`${field}: ${parsed.error.issues[0]?.message}`]);
  return parsed.data;
}

/**
 * Every order with its derived status, oldest stream name first. An order is read (through its
 * mailbox, one recovery the first time) only when its version moved since the last listing.
 */
export function listOrders(ctx: ShopContext): Promise<OrderSummary[]> {
  return ctx.orderStatuses.list();
}
