import type { FastifyInstance } from "fastify";
import type { EffectStatus, Settlement } from "oncely";
import { errors, InvalidInputError, listEffects, settlementSchema } from "oncely";
import { z } from "zod";
import { listOrders, ORDER_STATUSES, type ShopContext } from "../context.js";
import { checkShopSettlement } from "../settlement-rule.js";

const EFFECT_STATUSES = ["NotRequested", "Pending", "Completed", "Failed", "Unknown"] as const;
const effectsQuery = z.strictObject({
  status: z.enum(EFFECT_STATUSES, { message: `must be one of ${EFFECT_STATUSES.join(", ")}` }).optional(),
  kind: z.string().min(1).optional(),
  limit: z.coerce.number<string>().int().min(1).max(10_000).default(100),
});

const issuesOf = (error: z.ZodError) => error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);

/** The operator's side: the reconciliation queue, settling it, effects across orders, counters. */
export function adminRoutes(app: FastifyInstance, ctx: ShopContext): void {
  app.get("/admin/reconciliation", async () => {
    const items = await ctx.reconciliation.list();
    return { total: items.length, items };
  });

  app.post("/admin/reconciliation/:key/settle", async (request) => {
    const { key } = request.params as { key: string };
    const parsed = settlementSchema.safeParse(request.body);
    if (!parsed.success) throw new InvalidInputError("invalid settlement", issuesOf(parsed.error));
    const settlement = parsed.data as Settlement;
    const row = await ctx.journal.getOutbox(key);
    if (row?.category !== "effect") throw new errors.EffectNotFoundError(key);
    checkShopSettlement(row, settlement);
    return ctx.reconciliation.settle(key, settlement);
  });

  app.get("/admin/effects", async (request) => {
    const parsed = effectsQuery.safeParse(request.query ?? {});
    if (!parsed.success) throw new InvalidInputError("invalid query", issuesOf(parsed.error));
    const { status, kind, limit } = parsed.data;
    const effects = await listEffects(ctx.journal, {
      ...(status === undefined ? {} : { status: status as EffectStatus }),
      ...(kind === undefined ? {} : { kind }),
      limit,
    });
    return { total: effects.length, effects };
  });

  app.get("/admin/stats", async () => {
    const orders = await listOrders(ctx);
    const byStatus = Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0])) as Record<string, number>;
    for (const order of orders) byStatus[order.status] = (byStatus[order.status] ?? 0) + 1;
    return {
      pid: process.pid,
      dispatcherOwner: ctx.dispatcher?.owner ?? null,
      uptimeMs: ctx.clock.now() - ctx.startedAt,
      runtime: { ...ctx.runtime.stats },
      dispatcher: ctx.dispatcher ? { ...ctx.dispatcher.stats } : null,
      reconciliation: await ctx.reconciliation.count(),
      integration: ctx.contexts ? await ctx.contexts.stats() : null,
      orders: { total: orders.length, byStatus },
    };
  });
}
