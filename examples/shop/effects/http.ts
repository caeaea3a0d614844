import type { EffectPolicy, RunResult } from "oncely";
import { errors, failed, succeeded } from "oncely";
import type { z } from "zod";
import { keepAliveRequest, type RawAnswer } from "./keep-alive-client.js";

/**
 * What the three HTTP effect handlers share: one POST with the effect's key as
 * `Idempotency-Key`, one GET lookup by key, and one classification of answers.
 *
 * | answer | meaning | handler says |
 * | --- | --- | --- |
 * | 2xx | done | `succeeded(result)` |
 * | 402 | a definite business "no" (declined) | `failed(reason)` |
 * | 409 | the key was used before with another request | throws `IdempotencyKeyReusedError` (see below) |
 * | 408, 425, 429 | not done, try later | throws `ProviderUnavailableError` |
 * | other 4xx | the request can never succeed as sent | `failed(reason)` |
 * | 5xx, timeout, reset, unparsable 2xx | the provider may have acted | throws (ambiguous) |
 *
 * Why 409 is not `failed`: `failed` means "definitely not done", and the order then moves on as
 * if nothing happened (a payment_failed order, no mail). But a 409 says a request with this very
 * key already went through, with a different body — the card may well have been charged. Calling
 * that a failure would hide a real charge. So it is ambiguous: the effect goes Unknown, `lookup`
 * finds the earlier operation, sees that it does not match this effect's input, throws again, and
 * the effect ends in the reconciliation queue where an operator decides. Retrying the run with the
 * same key is harmless: the provider answers 409 again without acting.
 */

/**
 * The provider answered "not now" or could not be reached; it may or may not have acted. A plain
 * Error on purpose: oncely reads a thrown `RetryableError` as "definitely not performed", which a
 * reset or a 5xx cannot promise, so this stays ambiguous (same key, lookup, reconciliation).
 */
export class ProviderUnavailableError extends Error {
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options);
    this.name = "ProviderUnavailableError";
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** A 2xx whose body is not what the provider promised: the work may be done, the answer is useless (ambiguous). */
export class ProviderProtocolError extends Error {
  override readonly name = "ProviderProtocolError";
}

export interface HttpHandlerOptions {
  /** Base URL of the provider, e.g. `http://127.0.0.1:4001`. */
  baseUrl: string;
  /**
   * Whether the provider deduplicates by `Idempotency-Key` (default true). Set false for a provider
   * that charges again on every request (the payment provider's `noIdempotency` mode): an ambiguous
   * run is then never retried blindly, only looked up.
   */
  providerDedups?: boolean;
  /** Other policy overrides for the dispatcher (timeouts, attempts, backoff). */
  policy?: Partial<EffectPolicy>;
  /** Injected for tests; by default a pooled keep-alive `node:http` client (see `keep-alive-client.ts`). */
  fetch?: typeof fetch;
}

interface Answer {
  status: number;
  body: unknown;
  retryAfterMs: number | undefined;
}

async function request(
  options: HttpHandlerOptions,
  path: string,
  init: { method: "GET" | "POST"; headers?: Record<string, string>; body?: unknown },
  signal: AbortSignal,
): Promise<Answer> {
  const url = new URL(path, options.baseUrl);
  const headers = { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers };
  const sent = {
    method: init.method,
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  };
  let answer: RawAnswer;
  try {
    answer = options.fetch
      ? await viaFetch(options.fetch, url, sent, signal)
      : await keepAliveRequest(url, sent, signal);
  } catch (error) {
    // The dispatcher's own abort reason (its timeout error) is the most precise thing to report.
    if (signal.aborted) throw signal.reason ?? error;
    throw new ProviderUnavailableError(`${init.method} ${url} got no answer: ${describe(error)}`, undefined, {
      cause: error,
    });
  }
  const { text } = answer;
  let body: unknown = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: keep the text so the error message shows what came back.
  }
  const retryAfter = Number(answer.header("retry-after"));
  return {
    status: answer.status,
    body,
    retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
  };
}

async function viaFetch(
  doFetch: typeof fetch,
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string },
  signal: AbortSignal,
): Promise<RawAnswer> {
  const response = await doFetch(url, { ...init, signal });
  const text = await response.text();
  return { status: response.status, header: (name) => response.headers.get(name) ?? undefined, text };
}

const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${error.message}${cause}`;
};

const reasonOf = (body: unknown, fallback: string): string => {
  if (body && typeof body === "object") {
    const { reason, error } = body as { reason?: unknown; error?: unknown };
    if (typeof reason === "string") return reason;
    if (typeof error === "string") return error;
  }
  return typeof body === "string" && body !== "" ? body : fallback;
};

/** POST `path` with the key as `Idempotency-Key`, and classify the answer (see the table above). */
export async function runRequest<R>(
  options: HttpHandlerOptions,
  path: string,
  input: unknown,
  key: string,
  signal: AbortSignal,
  resultSchema: z.ZodType<R>,
): Promise<RunResult<R>> {
  const answer = await request(
    options,
    path,
    { method: "POST", headers: { "idempotency-key": key }, body: input },
    signal,
  );
  const { status, body } = answer;
  if (status >= 200 && status < 300) {
    const parsed = resultSchema.safeParse(body);
    if (!parsed.success) {
      throw new ProviderProtocolError(
        `POST ${path} answered ${status} with an unexpected body: ${JSON.stringify(body)}`,
      );
    }
    return succeeded(parsed.data);
  }
  if (status === 402) return failed(reasonOf(body, "declined"));
  if (status === 409) throw new errors.IdempotencyKeyReusedError(key);
  if (status === 408 || status === 425 || status === 429 || status >= 500) {
    throw new ProviderUnavailableError(
      `POST ${path} answered ${status}: ${reasonOf(body, "no reason given")}`,
      status,
      answer.retryAfterMs === undefined ? {} : { retryAfterMs: answer.retryAfterMs },
    );
  }
  return failed(`provider rejected the request (${status}): ${reasonOf(body, "no reason given")}`);
}

/**
 * GET `path?idempotencyKey=key`: the provider's record of the key, or `undefined` on 404. Anything
 * else throws, which the resolver counts as "still unknown". The caller compares the record with
 * the effect's input (`lookupMatching`): a record under the key may be another request's.
 */
export async function findRecord<B>(
  options: HttpHandlerOptions,
  path: string,
  key: string,
  signal: AbortSignal,
  recordSchema: z.ZodType<B>,
): Promise<B | undefined> {
  const answer = await request(options, `${path}?idempotencyKey=${encodeURIComponent(key)}`, { method: "GET" }, signal);
  if (answer.status === 404) return undefined;
  if (answer.status !== 200) {
    throw new ProviderUnavailableError(
      `GET ${path} for "${key}" answered ${answer.status}: ${reasonOf(answer.body, "no reason given")}`,
      answer.status,
    );
  }
  const parsed = recordSchema.safeParse(answer.body);
  if (!parsed.success) {
    throw new ProviderProtocolError(
      `GET ${path} for "${key}" answered an unexpected body: ${JSON.stringify(answer.body)}`,
    );
  }
  return parsed.data;
}

/** Policy of a handler: dedup per option, other overrides passed through. */
export function policyOf(options: HttpHandlerOptions): Partial<EffectPolicy> {
  return { ...options.policy, providerDedups: options.providerDedups ?? true };
}

/** Stable comparison of a provider's record with the effect's input (key order does not matter). */
export function sameRequest(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
