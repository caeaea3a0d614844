import type { FastifyError } from "fastify";
import { InvalidInputError, NotRegisteredError, RuntimeClosedError } from "../base/errors.js";
import { EffectNotFoundError, EffectNotRetryableError, EffectNotSettleableError } from "../effects/errors.js";

/** An answer the console gives on purpose (401 without the token, 404 for an unknown dead letter...). */
export class ConsoleHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly issues: string[] = [],
  ) {
    super(message);
    this.name = "ConsoleHttpError";
  }
}

export interface ConsoleErrorBody {
  error: string;
  issues?: string[];
}

/**
 * Every error of a console route as `{error, issues?}` with a 4xx naming what is wrong; a 500
 * only for what nobody foresaw (its message is not echoed: it may hold internals).
 */
export function consoleError(error: unknown): { status: number; body: ConsoleErrorBody } {
  if (error instanceof ConsoleHttpError) {
    return {
      status: error.status,
      body: { error: error.message, ...(error.issues.length ? { issues: error.issues } : {}) },
    };
  }
  if (error instanceof InvalidInputError)
    return { status: 400, body: { error: error.message, issues: [...error.issues] } };
  if (error instanceof EffectNotFoundError) return { status: 404, body: { error: error.message } };
  if (
    error instanceof EffectNotSettleableError ||
    error instanceof EffectNotRetryableError ||
    error instanceof NotRegisteredError ||
    error instanceof RuntimeClosedError
  ) {
    return { status: 409, body: { error: error.message } };
  }
  const { statusCode, message } = (error ?? {}) as Partial<FastifyError>;
  if (typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    return { status: statusCode, body: { error: `invalid request: ${message}`, issues: [`body: ${message}`] } };
  }
  return { status: 500, body: { error: "internal error" } };
}
