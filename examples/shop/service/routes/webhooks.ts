import type { FastifyInstance } from "fastify";
import { errors, InvalidInputError } from "oncely";
import { z } from "zod";
import {
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
} from "../../providers/shared/webhook-signature.js";
import {
  type RecordLinesUnavailable,
  type RecordShipment,
  type ShipmentEvent,
  shipmentAddress,
  UnknownShipmentError,
  warehouseMessageId,
} from "../../shipping/actor.js";
import { orderIdSchema, type ShopContext, sendCommand } from "../context.js";
import { ConflictError, NotFoundError, UnauthorizedError } from "../errors.js";
import { assertStorableText } from "../validation.js";

const eventIdSchema = z.string().trim().min(1, "must not be empty").max(200);
const occurredAtSchema = z.iso.datetime({ message: "must be an ISO 8601 date-time", offset: true });
export const warehouseWebhookSchema = z.discriminatedUnion(
  "type",
  [
    z.object({
      eventId: eventIdSchema,
      type: z.literal("OrderShipped"),
      orderId: orderIdSchema,
      shipmentId: z.string().trim().min(1, "must not be empty").max(200),
      occurredAt: occurredAtSchema,
      adjustmentIds: z.array(z.string().trim().min(1, "must not be empty").max(200)).max(1000).optional(),
    }),
    z.object({
      eventId: eventIdSchema,
      type: z.literal("LinesUnavailable"),
      orderId: orderIdSchema,
      adjustmentId: z.string().trim().min(1, "must not be empty").max(200),
      lines: z
        .array(
          z.strictObject({
            sku: z.string().trim().min(1, "must not be empty").max(200),
            quantity: z.number().int("must be an integer").positive("must be positive"),
          }),
        )
        .min(1, "must hold at least one line")
        .max(1000),
      occurredAt: occurredAtSchema,
    }),
  ],
  { error: () => 'must be "OrderShipped" or "LinesUnavailable"' },
);

/**
 * `POST /webhooks/warehouse` (Shipping context): the warehouse's OrderShipped, delivered at least
 * once, maybe late, maybe twice. Sent to `shipment/{orderId}` as `RecordShipment`, deduplicated by
 * the shipment's inbox under `warehouse:{eventId}` in the same commit as `ShipmentRecorded` and the
 * outbox row of the integration event `OrderShipped`, so a redelivery after a crash is answered
 * and never recorded (or published) twice.
 *
 * An order Shipping never started (no `shipment/{id}` stream: a typo, a foreign id, a payment not
 * yet processed) is a 404 that leaves no trace: checked before sending, and refused again by the
 * shipment's decider should a start race the check (a refusal commits nothing).
 *
 * Only calls signed by the warehouse are believed (`Oncely-Signature`, see webhook-signature.ts): an
 * unsigned, forged or stale call is a 401 before its body is even parsed, so it records nothing
 * and cannot take the eventId of the real call that comes later.
 *
 * `LinesUnavailable` (the warehouse accepted the picklist but cannot ship these lines) takes the
 * same path as `RecordLinesUnavailable`, under the same inbox: recorded and published once per
 * adjustment, and the order refunds those lines.
 *
 * Limitation: the inbox is per shipment, so one eventId reused for two *different* orders is not
 * detected here (each shipment records it once); the warehouse ledger audit would show it.
 */
export function webhookRoutes(
  app: FastifyInstance,
  ctx: ShopContext,
  signing: { secret: string; toleranceMs?: number | undefined },
): void {
  // The signature covers the bytes the warehouse sent: keep them, and parse only once they are verified.
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
  app.post("/webhooks/warehouse", async (request) => {
    const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const check = verifyWebhookSignature({
      secret: signing.secret,
      header: request.headers[SIGNATURE_HEADER],
      rawBody,
      nowMs: ctx.clock.now(),
      toleranceMs: signing.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS,
    });
    if (!check.ok) throw new UnauthorizedError(`webhook refused: ${check.reason}`);
    // Fastify's own JSON parser, as on every other route (it refuses __proto__ and constructor keys).
    const body = await new Promise<unknown>((resolve, reject) => {
      void parseJson(request, rawBody.toString("utf8"), (error, value) => (error ? reject(error) : resolve(value)));
    });
    assertStorableText(body, "", "invalid webhook");
    const parsed = warehouseWebhookSchema.safeParse(body);
    if (!parsed.success) {
      throw new InvalidInputError(
        "invalid webhook",
        parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`),
      );
    }
    const webhook = parsed.data;
    const address = shipmentAddress(webhook.orderId);
    // An unknown shipment is refused by its decider (UnknownShipmentError, nothing written), so a webhook needs no
    // read of its own first: the shipment that asked the warehouse is active on its owner, and the command runs on it.
    const unknown = () => new NotFoundError(`no shipment for order ${webhook.orderId}`);
    const command: RecordShipment | RecordLinesUnavailable =
      webhook.type === "OrderShipped"
        ? {
            type: "RecordShipment",
            eventId: webhook.eventId,
            shipmentId: webhook.shipmentId,
            occurredAt: webhook.occurredAt,
            ...(webhook.adjustmentIds?.length ? { adjustmentIds: webhook.adjustmentIds } : {}),
          }
        : {
            type: "RecordLinesUnavailable",
            eventId: webhook.eventId,
            adjustmentId: webhook.adjustmentId,
            lines: webhook.lines,
          };
    let result: Awaited<ReturnType<typeof sendCommand>>;
    try {
      result = await sendCommand(ctx, address, command, { messageId: warehouseMessageId(webhook.eventId) });
    } catch (error) {
      if (error instanceof UnknownShipmentError) throw unknown();
      // The shipment's inbox holds this eventId's webhook with another body.
      if (error instanceof errors.MessageConflictError) {
        throw new ConflictError(`eventId ${webhook.eventId} reused with a different payload: ${error.message}`);
      }
      throw error;
    }
    if (result.duplicate && webhook.type === "OrderShipped") {
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
      // duplicate: this eventId was handled before, or the order had already shipped (or had this adjustment) under another one.
      duplicate: result.duplicate || reply?.duplicate === true,
      shipmentId: reply?.shipmentId ?? null,
      ...(webhook.type === "LinesUnavailable" ? { adjustmentId: webhook.adjustmentId } : {}),
    };
  });
}

type ShipmentRecorded = Extract<ShipmentEvent, { type: "ShipmentRecorded" }>;

async function recordedShipment(
  ctx: ShopContext,
  address: string,
  eventId: string,
): Promise<ShipmentRecorded | undefined> {
  for (const event of await ctx.journal.readStream(address)) {
    if (event.type !== "ShipmentRecorded") continue;
    const data = event.data as ShipmentRecorded;
    if (data.eventId === eventId) return data;
  }
  return undefined;
}
