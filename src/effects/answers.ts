import { IdempotencyKeyReusedError, RetryableError, StorageUnavailableError, TerminalError } from "../base/errors.js";
import { errorText } from "./context.js";
import { EffectTimeoutError } from "./errors.js";
import type { DefiniteResult, LookupResult, NotPerformed } from "./types.js";

/** Reading what a handler returned or threw, whatever it is: a definite answer, "not performed", or neither. */

export function definiteAnswer(raw: unknown): DefiniteResult | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as { outcome?: unknown; result?: unknown; reason?: unknown };
  if (r.outcome === "succeeded") return { outcome: "succeeded", result: r.result ?? null };
  if (r.outcome === "failed") return { outcome: "failed", reason: String(r.reason ?? "failed") };
  return undefined;
}

export function notPerformedAnswer(raw: unknown): NotPerformed | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as { outcome?: unknown; reason?: unknown; retryAfterMs?: unknown };
  if (r.outcome !== "not-performed") return undefined;
  const retryAfterMs =
    typeof r.retryAfterMs === "number" && Number.isFinite(r.retryAfterMs) ? r.retryAfterMs : undefined;
  return { outcome: "not-performed", reason: String(r.reason ?? "not performed"), retryAfterMs };
}

/**
 * oncely's `TerminalError` thrown by a handler: the provider refused for good. Not
 * `IdempotencyKeyReusedError` (a 409): the key went through before with another body, so the
 * provider may well have acted; that stays ambiguous, for lookup and reconciliation.
 */
export const thrownTerminal = (error: unknown): DefiniteResult | undefined =>
  error instanceof TerminalError && !(error instanceof IdempotencyKeyReusedError)
    ? { outcome: "failed", reason: errorText(error) }
    : undefined;

/**
 * oncely's `RetryableError` thrown by a handler: it asserts nothing happened. Not its subclasses
 * that say the opposite: a timeout (the provider may still act) and `StorageUnavailableError`
 * (a write's outcome may be unknown) stay ambiguous.
 */
export const thrownNotPerformed = (error: unknown): NotPerformed | undefined =>
  error instanceof RetryableError && !(error instanceof StorageUnavailableError || error instanceof EffectTimeoutError)
    ? { outcome: "not-performed", reason: errorText(error), retryAfterMs: error.retryAfterMs }
    : undefined;

/** A lookup's answer as a metric label: one of a fixed set, whatever a handler returned. */
export const lookupAnswerLabel = (found: LookupResult | undefined): string =>
  found === undefined
    ? "error"
    : ["succeeded", "failed", "not-found", "unknown"].includes(String(found.outcome))
      ? String(found.outcome)
      : "invalid";
