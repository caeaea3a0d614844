import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { InvalidInputError } from "../../../../src/core/errors.js";
import { parseOrderCommand, type RecordShipment } from "../../ordering/commands.js";
import type { OrderShipped } from "../../ordering/events.js";
import { orderAddress, orderIdSchema, type ShopContext } from "../context.js";
import { ConflictError, NotFoundError } from "../errors.js";

export const warehouseWebhookSchema = z.object({
  eventId: z.string().trim().min(1, "must not be empty").max(200),
  type: z.literal("OrderShipped", { message: 'must be "OrderShipped"' }),
  orderId: orderIdSchema,
  shipmentId: z.string().trim().min(1, "must not be empty").max(200),
  occurredAt: z.iso.datetime({ message: "must be an ISO 8601 date-time", offset: true }),
});

/**
 * `POST /webhooks/warehouse`: the warehouse's OrderShipped, delivered at least once, maybe late,
 * maybe twice. Deduplicated by the order's inbox under `warehouse:{eventId}`, in the same commit
 * as the OrderShipped event, so a redelivery after a crash is answered and never recorded twice.
 *
 * Limitation: the inbox is per order, so one eventId reused for two *different* orders is not
 * detected here (each order records it once); the warehouse ledger audit would show it.
 */
export function webhookRoutes(app: FastifyInstance, ctx: ShopContext): void {
  app.post("/webhooks/warehouse", async (request) => {
    const parsed = warehouseWebhookSchema.safeParse(request.body);
    if (!parsed.success) {
      throw new InvalidInputError(
        "invalid webhook",
        parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`),
      );
    }
    const webhook = parsed.data;
    const address = orderAddress(webhook.orderId);
    // Never create a stream for an order nobody placed: a typo or a foreign id must leave no trace.
    if ((await ctx.journal.streamVersion(address)) === 0) throw new NotFoundError(`no order ${webhook.orderId}`);
    const command = parseOrderCommand({
      type: "RecordShipment",
      eventId: webhook.eventId,
      shipmentId: webhook.shipmentId,
      occurredAt: webhook.occurredAt,
    }) as RecordShipment;
    const result = await ctx.runtime.send(address, command, { messageId: `warehouse:${webhook.eventId}` });
    if (result.duplicate) {
      const recorded = await recordedShipment(ctx, address, webhook.eventId);
      if (recorded && (recorded.shipmentId !== webhook.shipmentId || recorded.occurredAt !== webhook.occurredAt)) {
        throw new ConflictError(
          `eventId ${webhook.eventId} reused with a different payload: recorded shipment ${recorded.shipmentId} at ${recorded.occurredAt}`,
        );
      }
    }
    const reply = result.reply as { shipmentId?: string | null; duplicate?: boolean } | null;
    return {
      orderId: webhook.orderId,
      eventId: webhook.eventId,
      // duplicate: this eventId was handled before, or the order had already shipped under another one.
      duplicate: result.duplicate || reply?.duplicate === true,
      shipmentId: reply?.shipmentId ?? null,
    };
  });
}

async function recordedShipment(ctx: ShopContext, address: string, eventId: string): Promise<OrderShipped | undefined> {
  const events = await ctx.journal.readStream(address);
  for (const event of events) {
    if (event.type !== "OrderShipped") continue;
    const data = event.data as OrderShipped;
    if (data.eventId === eventId) return data;
  }
  return undefined;
}
