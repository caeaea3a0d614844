import Fastify, { type FastifyInstance } from "fastify";
import { consolePlugin } from "oncely/console";
import { CONSUMER_NAMES } from "../contexts.js";
import { requireAdminToken } from "./admin-auth.js";
import type { ShopContext } from "./context.js";
import { installErrorHandler, NotFoundError } from "./errors.js";
import { adminRoutes } from "./routes/admin.js";
import { cancelRoutes } from "./routes/cancel.js";
import { orderRoutes } from "./routes/orders.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { checkShopSettlement } from "./settlement-rule.js";
import { assertStorableText, DEFAULT_ORDER_LIMITS, type OrderLimits } from "./validation.js";

export interface AppOptions {
  /** Largest accepted request body in bytes (default 64 KiB); larger ones get 413 before parsing. */
  bodyLimit?: number | undefined;
  /** `Authorization: Bearer <adminToken>` opens `/admin/*`; nothing else does. */
  adminToken: string;
  /** Shared with the warehouse, which signs its webhook calls with it. */
  webhookSecret: string;
  /** How far a webhook's signed timestamp may lie from this shop's clock (default 5 minutes). */
  webhookToleranceMs?: number | undefined;
  /** Bounds of an order (largest total, most lines). */
  orderLimits?: OrderLimits | undefined;
}

/** The shop's HTTP API over a context; listening is the caller's business (tests use `inject`). */
export function buildApp(ctx: ShopContext, options: AppOptions): FastifyInstance {
  // Request logging stays off: the journal is the record; errors go to the context's logger.
  const app = Fastify({ logger: false, bodyLimit: options.bodyLimit ?? 64 * 1024, forceCloseConnections: true });
  // JSON only: without this, fastify's built-in text/plain parser hands a string to the routes (400, not 415).
  app.removeContentTypeParser("text/plain");
  installErrorHandler(app, ctx.logger);
  // One check for every route: no string the back ends cannot store gets past the boundary.
  app.addHook("preValidation", async (request) => {
    assertStorableText(request.params, "", "invalid request");
    assertStorableText(request.query, "", "invalid request");
    assertStorableText(request.body, "", "invalid request");
  });
  app.get("/health", async () => ({ ok: true, journal: ctx.journal.backend }));
  const registry = ctx.registry;
  if (registry) {
    // Not behind the admin token: counts and ages labelled by effect kind, actor type, consumer and
    // event type (names from code, never an order id, amount or payload), and a scraper should not
    // need the token that can settle effects. Put it behind the network's own controls.
    app.get("/metrics", async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    });
  }
  orderRoutes(app, ctx, options.orderLimits ?? DEFAULT_ORDER_LIMITS);
  cancelRoutes(app, ctx);
  void app.register(async (scope) => {
    webhookRoutes(scope, ctx, { secret: options.webhookSecret, toleranceMs: options.webhookToleranceMs });
  });
  void app.register(async (scope) => {
    // Scoped to the admin routes: every route registered here, GET included, needs the token.
    scope.addHook("onRequest", requireAdminToken(options.adminToken));
    adminRoutes(scope, ctx);
    // Any other /admin path: 401 without the token too, so an anonymous caller cannot map the admin API.
    scope.all("/admin/*", async (request) => {
      throw new NotFoundError(`no route ${request.method} ${request.url}`);
    });
  });
  // The operator console at /console, behind the same admin token (see docs/operations/console.md).
  void app.register(consolePlugin, {
    prefix: "/console",
    journal: ctx.journal,
    token: options.adminToken,
    reconciliation: ctx.reconciliation,
    deadLetters: ctx.contexts?.deadLetters,
    consumers: Object.values(CONSUMER_NAMES),
    checkSettlement: checkShopSettlement,
    clock: ctx.clock,
    ids: ctx.ids,
  });
  return app;
}
