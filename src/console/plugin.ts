import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { discard, replay, retry, settle, skipGapAction, supplyGapAction } from "./actions.js";
import { bearerVerifier } from "./bearer.js";
import { bulkAction, bulkCount } from "./bulk-forms.js";
import { CLIENT_SCRIPT } from "./client-script.js";
import { ConsoleHttpError, consoleError } from "./errors.js";
import type { Html } from "./html.js";
import { LiveFeed } from "./live.js";
import { type ConsoleContext, type ConsoleOptions, consoleContext } from "./options.js";
import { auditPage } from "./pages/audit.js";
import { deadLetterPage, deadLettersPage } from "./pages/dead-letters.js";
import { effectsPage } from "./pages/effects.js";
import { lagPage } from "./pages/lag.js";
import { ownershipPage } from "./pages/ownership.js";
import { parkedPage } from "./pages/parked.js";
import { reconciliationPage } from "./pages/reconciliation.js";
import { timelinePage } from "./pages/timeline.js";
import { shellPage } from "./shell.js";
import { STYLES } from "./styles.js";

/**
 * No script, style or connection from anywhere but this server, no inline script (an injected
 * `<script>` would not run even if a value escaped escaping), no framing, no form posting elsewhere.
 */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function secure(reply: FastifyReply, type: string): FastifyReply {
  return reply
    .header("content-type", type)
    .header("content-security-policy", CSP)
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("cache-control", "no-store");
}

const viewPages: Record<string, (ctx: ConsoleContext, request: FastifyRequest) => Promise<Html>> = {
  effects: (ctx, request) => effectsPage(ctx, request.query),
  reconciliation: (ctx, request) => reconciliationPage(ctx, request.query),
  "dead-letters": (ctx, request) => deadLettersPage(ctx, request.query),
  parked: (ctx) => parkedPage(ctx),
  lag: (ctx) => lagPage(ctx),
  ownership: (ctx) => ownershipPage(ctx),
  timeline: (ctx, request) => timelinePage(ctx, request.query),
  audit: (ctx) => auditPage(ctx),
};

/**
 * The operator console as a fastify plugin: register it with a prefix
 * (`app.register(consolePlugin, { prefix: "/console", journal, token })`).
 *
 * - `GET <prefix>/…` answers the same data-free shell page, its script and its stylesheet, with no token;
 * - everything under `<prefix>/api/` needs `Authorization: Bearer <token>`, GET included: the
 *   views (HTML fragments, every value escaped) and the POST actions (settle, retry, replay,
 *   discard, gap skip and supply),
 *   which take JSON, answer `{message}` or `{error, issues}` with a 4xx naming the field, and
 *   record the operator who took them.
 *
 * Only fastify's types are imported: the application (or `oncely console`) brings fastify.
 */
export async function consolePlugin(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const ctx = consoleContext(options, app.prefix);
  app.setErrorHandler((error, _request, reply) => {
    const { status, body } = consoleError(error);
    if (status >= 500) app.log.error({ err: error }, "console request failed");
    void secure(reply, "application/json; charset=utf-8").code(status).send(body);
  });

  const feed = new LiveFeed(ctx.journal, ctx.pollMs, (error) =>
    app.log.warn({ err: error }, "console live feed: could not read the journal"),
  );
  const streams = new Set<() => void>();
  // Open streams would keep the server from closing: end them first.
  app.addHook("preClose", async () => {
    for (const end of [...streams]) end();
    feed.close();
  });

  app.get("/assets/console.js", async (_request, reply) =>
    secure(reply, "text/javascript; charset=utf-8").send(CLIENT_SCRIPT),
  );
  app.get("/assets/console.css", async (_request, reply) => secure(reply, "text/css; charset=utf-8").send(STYLES));
  const shell = shellPage(ctx);
  const sendShell = async (_request: FastifyRequest, reply: FastifyReply) =>
    secure(reply, "text/html; charset=utf-8").send(shell);
  app.get("/", sendShell);
  for (const page of Object.keys(viewPages)) app.get(`/${page}`, sendShell);
  app.get("/dead-letters/:id", sendShell);

  await app.register(async (api) => {
    const verify = bearerVerifier(ctx.token);
    api.addHook("onRequest", async (request, reply) => {
      const check = verify(request.headers.authorization);
      if (check === "ok") return;
      void reply.header("www-authenticate", check === "missing" ? "Bearer" : 'Bearer error="invalid_token"');
      throw new ConsoleHttpError(
        401,
        check === "missing" ? "console: send Authorization: Bearer <admin token>" : "console: invalid bearer token",
      );
    });

    api.get("/api/view/dead-letters/:id", async (request, reply) => {
      const { id } = request.params as { id: string };
      return secure(reply, "text/html; charset=utf-8").send((await deadLetterPage(ctx, id)).text);
    });
    api.get("/api/view/:page", async (request, reply) => {
      const { page } = request.params as { page: string };
      const render = Object.hasOwn(viewPages, page) ? viewPages[page] : undefined;
      if (!render)
        throw new ConsoleHttpError(404, `no console page "${page}"`, [
          `page: one of ${Object.keys(viewPages).join(", ")}`,
        ]);
      return secure(reply, "text/html; charset=utf-8").send((await render(ctx, request)).text);
    });

    // Server-sent events (`text/event-stream`): `change` naming the topics whose pages changed. The
    // page reads it with fetch, so the token travels in the Authorization header as everywhere else.
    api.get("/api/live", async (request, reply) => {
      reply.hijack();
      const headers: Record<string, string> = {
        "content-type": "text/event-stream; charset=utf-8",
        "content-security-policy": CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      };
      reply.raw.writeHead(200, headers);
      reply.raw.write(": live\n\n");
      const stop = feed.listen((chunk) => reply.raw.write(chunk));
      const end = () => {
        stop();
        streams.delete(end);
        reply.raw.end();
      };
      streams.add(end);
      request.raw.on("close", end);
    });

    api.post("/api/reconciliation/settle", async (request) => settle(ctx, request.body));
    api.post("/api/reconciliation/retry", async (request) => retry(ctx, request.body));
    api.post("/api/dead-letters/bulk/count", async (request) => bulkCount(ctx, request.body));
    api.post("/api/dead-letters/bulk", async (request) => bulkAction(ctx, request.body));
    api.post("/api/dead-letters/:id/replay", async (request) =>
      replay(ctx, (request.params as { id: string }).id, request.body),
    );
    api.post("/api/dead-letters/:id/discard", async (request) =>
      discard(ctx, (request.params as { id: string }).id, request.body),
    );
    api.post("/api/gaps/skip", async (request) => skipGapAction(ctx, request.body));
    api.post("/api/gaps/supply", async (request) => supplyGapAction(ctx, request.body));
    api.all("/api/*", async (request) => {
      throw new ConsoleHttpError(404, `no console route ${request.method} ${request.url}`);
    });
  });
}
