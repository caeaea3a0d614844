import { setMaxListeners } from "node:events";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Clock } from "oncely";
import { z } from "zod";
import type { BaseFaults, FaultPlan, FaultSettings } from "./faults.js";

/** One problem with a request, naming the field (`amount`, `lines.0.quantity`, `Idempotency-Key`). */
export interface FieldIssue {
  field: string;
  message: string;
}

export function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join(".") : "body",
    message: issue.message,
  }));
}

/** A 400 body whose `error` names every offending field, so a human reading a log sees the cause. */
export function badRequest(issues: FieldIssue[]) {
  return {
    error: `invalid request: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`,
    issues,
  };
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

export function parseWith<T>(schema: z.ZodType<T>, input: unknown): Parsed<T> {
  const result = schema.safeParse(input);
  return result.success ? { ok: true, value: result.data } : { ok: false, issues: issuesOf(result.error) };
}

const idempotencyKeySchema = z.string().trim().min(1).max(255);

/** The `Idempotency-Key` header, validated. */
export function idempotencyKeyOf(request: FastifyRequest): Parsed<string> {
  const raw = request.headers["idempotency-key"];
  const result = idempotencyKeySchema.safeParse(raw);
  if (result.success) return { ok: true, value: result.data };
  return {
    ok: false,
    issues: [
      { field: "Idempotency-Key", message: raw === undefined ? "header is required" : "must be 1-255 characters" },
    ],
  };
}

/** The `idempotencyKey` query parameter of a lookup. */
export function lookupKeyOf(request: FastifyRequest): Parsed<string> {
  const query = request.query as Record<string, unknown> | undefined;
  const result = idempotencyKeySchema.safeParse(query?.idempotencyKey);
  return result.success
    ? { ok: true, value: result.data }
    : { ok: false, issues: [{ field: "idempotencyKey", message: "query parameter is required" }] };
}

/** Stable JSON of a request body: two requests are "the same" when these strings are equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export interface ProviderApp {
  app: FastifyInstance;
  /** Aborted by `close()`, so slow answers and background work stop at once. */
  closing: AbortSignal;
  /**
   * Answers after the work was done, applying the slow and dropAfter faults: the work has
   * happened either way, only the answer is late or lost.
   */
  answer(request: FastifyRequest, reply: FastifyReply, plan: FaultPlan, status: number, body: unknown): Promise<void>;
  /**
   * A request under a key seen before: the stored answer again, or 409 when the request differs
   * from the one the key first came with (faults apply as to any answer).
   */
  replay(
    request: FastifyRequest,
    reply: FastifyReply,
    plan: FaultPlan,
    key: string,
    first: { request: string; status: number; body: unknown },
    incoming: unknown,
  ): Promise<void>;
  listen(host: string, port: number): Promise<string>;
  close(): Promise<void>;
}

export function createProviderApp<F extends BaseFaults>(options: {
  name: string;
  faults: FaultSettings<F>;
  clock: Clock;
  ledger: () => unknown;
}): ProviderApp {
  const controller = new AbortController();
  // Every slow answer, webhook delivery and backoff sleep listens on this one signal; more than 10 at
  // once is normal under load, so Node's leak warning (default limit 10) would be a false alarm.
  setMaxListeners(0, controller.signal);
  // No request logging: these are test doubles; the ledger is their record.
  const app = Fastify({ logger: false, forceCloseConnections: true });

  app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
    // Fastify's own parse errors (bad JSON, wrong content type) are the caller's fault: the field is the body.
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    void reply
      .code(status)
      .send(status < 500 ? badRequest([{ field: "body", message: error.message }]) : { error: error.message });
  });

  app.get("/ledger", async () => options.ledger());
  app.get("/faults", async () => options.faults.get());
  app.post("/faults", async (request, reply) => {
    try {
      return options.faults.set(request.body ?? {});
    } catch (error) {
      if (error instanceof z.ZodError) return reply.code(400).send(badRequest(issuesOf(error)));
      throw error;
    }
  });
  app.get("/health", async () => ({ ok: true, provider: options.name }));

  return {
    app,
    closing: controller.signal,
    async answer(request, reply, plan, status, body) {
      if (plan.slow) {
        try {
          await options.clock.sleep(options.faults.get().slowMs, controller.signal);
        } catch {
          // Closing while a slow answer waits: the caller never hears back, as with a crash.
          reply.hijack();
          request.raw.socket.destroy();
          return;
        }
      }
      if (plan.dropAfter) {
        // The work is done; the caller only sees a reset connection. The classic ambiguous outcome.
        reply.hijack();
        request.raw.socket.destroy();
        return;
      }
      await reply.code(status).send(body);
    },
    replay(request, reply, plan, key, first, incoming) {
      if (first.request !== canonicalJson(incoming)) {
        return this.answer(request, reply, plan, 409, {
          error: `Idempotency-Key "${key}" was already used with a different request`,
        });
      }
      return this.answer(request, reply, plan, first.status, first.body);
    },
    async listen(host, port) {
      await app.listen({ host, port });
      const address = app.server.address();
      if (address === null || typeof address === "string") throw new Error(`${options.name}: no TCP address`);
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return `http://${shownHost}:${address.port}`;
    },
    async close() {
      controller.abort(new Error(`${options.name} provider closed`));
      await app.close();
    },
  };
}

/**
 * The Idempotency-Key header and the body of a POST, both validated; on any problem the 400 (naming
 * every bad field) is sent and undefined returned.
 */
export function keyedRequest<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  schema: z.ZodType<T>,
): { key: string; body: T } | undefined {
  const key = idempotencyKeyOf(request);
  const body = parseWith(schema, request.body);
  if (key.ok && body.ok) return { key: key.value, body: body.value };
  void reply.code(400).send(badRequest([...(key.ok ? [] : key.issues), ...(body.ok ? [] : body.issues)]));
  return undefined;
}

/** Answers a fault-injected failure: nothing was done. */
export function injectedFailure(reply: FastifyReply) {
  return reply.code(503).send({ error: "injected failure: nothing was done, try again" });
}
