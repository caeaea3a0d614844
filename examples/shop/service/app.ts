import Fastify, { type FastifyInstance } from "fastify";
import type { ShopContext } from "./context.js";
import { installErrorHandler } from "./errors.js";
import { adminRoutes } from "./routes/admin.js";
import { orderRoutes } from "./routes/orders.js";
import { webhookRoutes } from "./routes/webhooks.js";

export interface AppOptions {
  /** Largest accepted request body in bytes (default 64 KiB); larger ones get 413 before parsing. */
  bodyLimit?: number | undefined;
}

/** The shop's HTTP API over a context; listening is the caller's business (tests use `inject`). */
export function buildApp(ctx: ShopContext, options: AppOptions = {}): FastifyInstance {
  // Request logging stays off: the journal is the record; errors go to the context's logger.
  const app = Fastify({ logger: false, bodyLimit: options.bodyLimit ?? 64 * 1024, forceCloseConnections: true });
  installErrorHandler(app, ctx.logger);
  app.get("/health", async () => ({ ok: true, journal: ctx.journal.backend }));
  orderRoutes(app, ctx);
  webhookRoutes(app, ctx);
  adminRoutes(app, ctx);
  return app;
}
