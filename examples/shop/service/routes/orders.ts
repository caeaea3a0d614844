import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { errors, InvalidInputError } from "oncely";
import { z } from "zod";
import { type PlaceOrder, parseOrderCommand } from "../../ordering/commands.js";
import type { OrderState } from "../../ordering/state.js";
import { readOrderView } from "../../views/order-views.js";
import { listOrders, ORDER_STATUSES, orderAddress, parseOrderId, type ShopContext, sendCommand } from "../context.js";
import { NotFoundError } from "../errors.js";
import { orderHistory, orderView } from "../order-view.js";
import { DEFAULT_ORDER_LIMITS, type OrderLimits, orderBodySchema } from "../validation.js";

const BODY_FIELDS = new Set(["email", "currency", "lines"]);
const idempotencyKeySchema = z.string().regex(/^[\x21-\x7e]{1,255}$/, "must be 1-255 visible ASCII characters");

/** `ord_` + 20 hex chars of sha256(key): the same key names the same order in every process, forever. */
export const orderIdForKey = (key: string): string =>
  `ord_${createHash("sha256").update(key).digest("hex").slice(0, 20)}`;

/**
 * The API body `{email, currency, lines}` as a `PlaceOrder` command: first the API's bounds
 * (`orderBodySchema`: ISO 4217 currency, caps on lengths, lines and the total, storable text), then
 * the order's own schema. Issues name the API's fields (`email`, `lines.0.unitPrice`).
 */
export function placeOrderFromBody(body: unknown, limits: OrderLimits = DEFAULT_ORDER_LIMITS): PlaceOrder {
  return placeOrderWith(orderBodySchema(limits), body);
}

function placeOrderWith(schema: ReturnType<typeof orderBodySchema>, body: unknown): PlaceOrder {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidInputError("invalid order", ["body: must be a JSON object {email, currency, lines}"]);
  }
  const unknownFields = Object.keys(body).filter((k) => !BODY_FIELDS.has(k));
  const { email, currency, lines } = body as Record<string, unknown>;
  const issues = unknownFields.map((k) => `${k}: unknown field (accepted: email, currency, lines)`);
  const bounded = schema.safeParse({ email, currency, lines });
  if (!bounded.success) {
    issues.push(...bounded.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`));
  }
  if (issues.length > 0 || !bounded.success) throw new InvalidInputError("invalid order", issues);
  try {
    const { email: customerEmail, ...rest } = bounded.data;
    return parseOrderCommand({ type: "PlaceOrder", customerEmail, ...rest }) as PlaceOrder;
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const renamed = error.issues.map((i) => i.replace(/^customerEmail\b/, "email"));
    throw new InvalidInputError("invalid order", renamed);
  }
}

/** The `Idempotency-Key` header, validated; undefined when absent. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const raw = request.headers["idempotency-key"];
  if (raw === undefined) return undefined;
  const parsed = idempotencyKeySchema.safeParse(raw);
  if (!parsed.success)
    throw new InvalidInputError("invalid request", [`Idempotency-Key: ${parsed.error.issues[0]?.message}`]);
  return parsed.data;
}

const sameOrder = (state: OrderState, command: PlaceOrder) =>
  state.details !== null &&
  state.details.customerEmail === command.customerEmail &&
  state.details.currency === command.currency &&
  JSON.stringify(state.details.lines) === JSON.stringify(command.lines);

const statusQuery = z.strictObject({
  status: z.enum(ORDER_STATUSES, { message: `must be one of ${ORDER_STATUSES.join(", ")}` }).optional(),
  limit: z.coerce.number<string>().int().min(1).max(10_000).default(100),
});

export function orderRoutes(app: FastifyInstance, ctx: ShopContext, limits: OrderLimits): void {
  const bodySchema = orderBodySchema(limits);
  /**
   * Place an order. With an `Idempotency-Key`, the order id comes from the key and the command's
   * message id is `place:{key}`: a retry (after a timeout, a reset, a 503 while the worker
   * restarts) is answered from the order's inbox with the same order, never a second one.
   */
  app.post("/orders", async (request, reply) => {
    const key = idempotencyKeyOf(request);
    const command = placeOrderWith(bodySchema, request.body);
    const orderId = key === undefined ? `ord_${ctx.ids.next().replace(/-/g, "").slice(0, 20)}` : orderIdForKey(key);
    const address = orderAddress(orderId);
    // A new order as a rule (a fresh id, or a key's first use): decided without reading its stream;
    // a retry of a key finds the order's history in the commit's version check and is answered as before.
    const result = await sendCommand(
      ctx,
      address,
      command,
      key === undefined ? { expectNew: true } : { messageId: `place:${key}`, expectNew: true },
    );
    if (result.duplicate) {
      // The inbox answers a repeated message id before the actor sees the command, so the body of
      // a repeat is compared here: the same key with another body is a client bug, not a retry.
      const { state } = await ctx.runtime.state<OrderState>(address);
      if (!sameOrder(state, command)) throw new errors.IdempotencyKeyReusedError(key ?? "");
      void reply.header("idempotent-replayed", "true");
    }
    void reply.header("location", `/orders/${orderId}`);
    return reply.code(result.duplicate ? 200 : 201).send({ ...(result.reply as object), orderId });
  });

  app.get("/orders/:id", async (request) => {
    const orderId = parseOrderId((request.params as { id?: unknown }).id, "id");
    const address = orderAddress(orderId);
    // Checked first so that an unknown id never activates (or caches) an empty order.
    if ((await ctx.journal.streamVersion(address)) === 0) throw new NotFoundError(`no order ${orderId}`);
    const { state } = await ctx.runtime.state<OrderState>(address);
    return orderView(state, await orderHistory(ctx.journal, orderId));
  });

  /**
   * The order view built only from integration events (facts-mode and sequenced projections):
   * facts, the status derived at query time, and the timeline in aggregate-version order per
   * producer. 404 until some event of the order was consumed.
   */
  app.get("/order-views/:id", async (request) => {
    const orderId = parseOrderId((request.params as { id?: unknown }).id, "id");
    const view = await readOrderView(ctx.journal, orderId);
    if (!view) throw new NotFoundError(`no order view ${orderId}`);
    return view;
  });

  app.get("/orders", async (request) => {
    const parsed = statusQuery.safeParse(request.query ?? {});
    if (!parsed.success) {
      throw new InvalidInputError(
        "invalid query",
        parsed.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`),
      );
    }
    const { status, limit } = parsed.data;
    const all = await listOrders(ctx);
    const matching = status === undefined ? all : all.filter((o) => o.status === status);
    return { total: matching.length, orders: matching.slice(0, limit) };
  });
}
