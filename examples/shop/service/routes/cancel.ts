import type { FastifyInstance } from "fastify";
import { InvalidInputError } from "oncely";
import { z } from "zod";
import type { CancelOrder } from "../../ordering/cancellation.js";
import { parseOrderCommand } from "../../ordering/commands.js";
import type { OrderState } from "../../ordering/state.js";
import { orderAddress, parseOrderId, type ShopContext, sendCommand } from "../context.js";
import { NotFoundError } from "../errors.js";
import { idempotencyKeyOf } from "./orders.js";

const cancelBodySchema = z.strictObject({ reason: z.unknown() });

/**
 * `POST /orders/:id/cancel` with `Idempotency-Key` and `{reason}`: the order decides
 * (`ordering/cancellation.ts`). 202 once cancelled (the refund and the mail are under way), 200 when
 * it already was, 409 with the reason when the order already shipped, 404 for an unknown order. The
 * command's message id is `cancel:{key}`, so the same cancel again is answered from the order's
 * inbox (200, `Idempotent-Replayed`).
 */
export function cancelRoutes(app: FastifyInstance, ctx: ShopContext): void {
  app.post("/orders/:id/cancel", async (request, reply) => {
    const orderId = parseOrderId((request.params as { id?: unknown }).id, "id");
    const key = idempotencyKeyOf(request);
    if (key === undefined) throw new InvalidInputError("invalid request", ["Idempotency-Key: header is required"]);
    const body = cancelBodySchema.safeParse(request.body ?? {});
    if (!body.success) {
      throw new InvalidInputError(
        "invalid cancellation",
        body.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message} (accepted: reason)`),
      );
    }
    const command = parseOrderCommand({ type: "CancelOrder", reason: body.data.reason }) as CancelOrder;
    const address = orderAddress(orderId);
    // Checked first so that an unknown id never activates (or caches) an empty order.
    if ((await ctx.journal.streamVersion(address)) === 0) throw new NotFoundError(`no order ${orderId}`);
    const result = await sendCommand(ctx, address, command, { messageId: `cancel:${key}` });
    if (result.duplicate) void reply.header("idempotent-replayed", "true");
    // 200 for a cancel already answered (this key from the inbox, another key from the state).
    const already = result.duplicate || (result.reply as { duplicate?: boolean } | undefined)?.duplicate === true;
    const { state } = await ctx.runtime.state<OrderState>(address);
    return reply.code(already ? 200 : 202).send({
      ...(result.reply as object),
      orderId,
      cancellation: state.cancellation,
    });
  });
}
