import { canonicalJson } from "../base/canonical-json.js";
import { IdempotencyKeyReusedError } from "../base/errors.js";

/** What decides whether two requests of one effect key are the same request. */
export interface EffectIdentity {
  stream: string;
  kind: string;
  /** The row's payload (parsed JSON), which holds the effect's input. */
  payload: unknown;
}

/**
 * An effect key already in the outbox, requested again. The same stream, kind and payload (compared
 * canonically, key order ignored, its trace context left out) is the same request: a no-op, as a retried decision must be.
 * Anything else would be silently dropped while its actor waits Pending forever, so the commit
 * fails with `IdempotencyKeyReusedError` instead. Every journal calls this inside its commit.
 * A row removed by outbox retention (`pruneOutbox`) can no longer be compared: past retention a
 * key must not be reused.
 */
export function effectKeyReuse(
  key: string,
  held: EffectIdentity,
  wanted: EffectIdentity,
): IdempotencyKeyReusedError | undefined {
  if (held.stream !== wanted.stream) {
    return new IdempotencyKeyReusedError(key, `requested by stream "${wanted.stream}", held by "${held.stream}"`);
  }
  if (held.kind !== wanted.kind) {
    return new IdempotencyKeyReusedError(key, `requested as kind "${wanted.kind}", held as "${held.kind}"`);
  }
  if (canonicalJson(withoutTrace(held.payload)) !== canonicalJson(withoutTrace(wanted.payload))) {
    return new IdempotencyKeyReusedError(key, `requested by "${wanted.stream}" with a different input`);
  }
  return undefined;
}

/**
 * The payload as the request's identity: without `trace`, the trace context of the command that
 * requested it (see src/observability): the same effect requested again from another command is
 * the same request.
 */
function withoutTrace(payload: unknown): unknown {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload) || !("trace" in payload))
    return payload;
  const { trace: _trace, ...rest } = payload as Record<string, unknown>;
  return rest;
}
