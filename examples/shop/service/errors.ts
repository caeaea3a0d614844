import type { FastifyError, FastifyInstance } from "fastify";
import type { Logger } from "oncely";
import { CommandRejectedError, errors, InvalidInputError, RetryableError } from "oncely";

/**
 * The one place that turns errors into HTTP answers. Every error body has the same shape,
 * `{error, issues?}`, so a client (or a human reading a log) always finds the cause in `error`.
 *
 * | error | status |
 * | --- | --- |
 * | InvalidInputError, fastify's JSON parse errors | 400 with issues naming each field |
 * | UnauthorizedError (no or a wrong admin token, an unsigned, forged or stale webhook) | 401 |
 * | body over the limit | 413 |
 * | unsupported content type | 415 |
 * | NotFoundError, errors.NotRegisteredError, errors.RuntimeClosedError (the service is stopping), errors.EffectNotFoundError | 404 |
 * | CommandRejectedError, errors.IdempotencyKeyReusedError, ConflictError, errors.MessageConflictError (a message id reused for another command), errors.EffectNotSettleableError | 409 |
 * | RetryableError (storage down, conflicts exhausted...) | 503 with Retry-After |
 * | anything else | 500 (logged; the message is not echoed) |
 */

export interface ErrorBody {
  error: string;
  issues?: string[];
}

/** A resource the request names does not exist (an order id nobody placed). */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NotFoundError";
  }
}

/** The caller is not who it must be: no or a wrong admin token, an unsigned, forged or stale webhook. */
export class UnauthorizedError extends Error {
  constructor(
    message: string,
    /** The `WWW-Authenticate` challenge to answer with, when there is one. */
    readonly challenge?: string,
  ) {
    super(message);
    this.name = "UnauthorizedError";
  }
}

/** The request contradicts what is already recorded (an eventId reused with another payload). */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConflictError";
  }
}

export function httpError(error: unknown): {
  status: number;
  body: ErrorBody;
  retryAfterS?: number;
  challenge?: string;
} {
  if (error instanceof UnauthorizedError) {
    return { status: 401, body: { error: error.message }, ...(error.challenge ? { challenge: error.challenge } : {}) };
  }
  if (error instanceof InvalidInputError) {
    return { status: 400, body: { error: error.message, issues: [...error.issues] } };
  }
  if (
    error instanceof NotFoundError ||
    error instanceof errors.NotRegisteredError ||
    error instanceof errors.RuntimeClosedError ||
    error instanceof errors.EffectNotFoundError
  ) {
    return { status: 404, body: { error: error.message } };
  }
  if (
    error instanceof CommandRejectedError ||
    error instanceof errors.IdempotencyKeyReusedError ||
    error instanceof ConflictError ||
    error instanceof errors.MessageConflictError ||
    error instanceof errors.EffectNotSettleableError
  ) {
    return { status: 409, body: { error: error.message } };
  }
  if (error instanceof RetryableError) {
    const retryAfterS = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
    return { status: 503, body: { error: `temporarily unavailable, try again: ${error.message}` }, retryAfterS };
  }
  const fastify = fastifyError(error);
  if (fastify) return fastify;
  return { status: 500, body: { error: "internal error" } };
}

/** Fastify's own errors (body parsing, limits, content types) in our shape. */
function fastifyError(error: unknown): { status: number; body: ErrorBody } | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { statusCode, code, message } = error as Partial<FastifyError>;
  if (typeof statusCode !== "number" || statusCode < 400 || statusCode >= 500) return undefined;
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return { status: 413, body: { error: "request body too large", issues: [`body: ${message}`] } };
  }
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    return {
      status: 415,
      body: { error: "unsupported content type: send application/json", issues: [`body: ${message}`] },
    };
  }
  return { status: statusCode, body: { error: `invalid request: ${message}`, issues: [`body: ${message}`] } };
}

export function installErrorHandler(app: FastifyInstance, logger: Logger): void {
  app.setErrorHandler((error, request, reply) => {
    const mapped = httpError(error);
    if (mapped.status >= 500) {
      logger.error({ err: error, method: request.method, url: request.url }, "request failed");
    }
    if (mapped.retryAfterS !== undefined) void reply.header("retry-after", String(mapped.retryAfterS));
    if (mapped.challenge !== undefined) void reply.header("www-authenticate", mapped.challenge);
    void reply.code(mapped.status).send(mapped.body);
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: `no route ${request.method} ${request.url}` });
  });
}
