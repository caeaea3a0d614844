import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import { isStorableText, unstorableStrings } from "../base/storable-text.js";
import type { NewOutboxRow } from "../journal/types.js";
import { MAX_TRACE_FIELD } from "../observability/tracing.js";

/**
 * The integration-event envelope, validated at both ends: by the relay before it publishes
 * (a malformed outbox row never reaches the broker) and by every consumer before it handles
 * (a malformed message goes to dead letters instead of crashing anything).
 *
 * `occurredAt` is for audit only: no ordering decision ever reads it (clocks of other services drift).
 * Order, where a consumer needs it, comes from `aggregateVersion` of one producer stream.
 */
/**
 * A string every journal can store (no NUL, no unpaired UTF-16 surrogate): for ids, keys and any
 * text taken in at a boundary (an HTTP body, a message). Reusable: `storableText.min(1).max(64)`.
 */
export const storableText = z
  .string()
  .refine(isStorableText, "must not contain NUL (U+0000) or an unpaired UTF-16 surrogate");

/** Any JSON-like value whose strings and keys are all storable; each offender is reported with its path. */
export const storableJson = z.unknown().superRefine((value, ctx) => {
  for (const { path, reason } of unstorableStrings(value)) ctx.addIssue({ code: "custom", path, message: reason });
});

/** Stream versions are 32-bit integers in every journal; a larger version is refused here, not by a store. */
export const MAX_AGGREGATE_VERSION = 2_147_483_647;

export const envelopeSchema = z.object({
  eventId: storableText.min(1),
  type: storableText.min(1),
  source: storableText.min(1),
  aggregateId: storableText.min(1),
  aggregateVersion: z.number().int().positive().max(MAX_AGGREGATE_VERSION).optional(),
  /** Version of the payload's shape; absent means 1 (envelopes written before versions existed). */
  schemaVersion: z.number().int().positive().max(MAX_AGGREGATE_VERSION).optional(),
  occurredAt: storableText.min(1),
  correlationId: storableText.min(1),
  causationId: storableText.min(1),
  payload: storableJson,
  /**
   * W3C trace context of the command that published the event (written by the registered OTel
   * propagator, stored with the outbox row so a republish carries the same one). Optional: older
   * envelopes and producers without tracing have none. Not part of the event's identity.
   */
  traceparent: storableText.min(1).max(MAX_TRACE_FIELD).optional(),
  tracestate: storableText.max(MAX_TRACE_FIELD).optional(),
  /** Id of the key that signed the envelope (see signing.ts); absent on an unsigned one. */
  keyId: storableText.min(1).optional(),
  /** HMAC-SHA256 (base64url) over the canonical envelope without this field. */
  signature: storableText.min(1).optional(),
});

export type Envelope<P = unknown> = Omit<z.infer<typeof envelopeSchema>, "payload"> & { payload: P };

/** Validate anything as an envelope; throws `InvalidInputError` with the schema's issues. */
export function parseEnvelope(input: unknown): Envelope {
  const result = envelopeSchema.safeParse(input);
  if (!result.success) {
    throw new InvalidInputError(
      "not an integration event envelope",
      result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`),
    );
  }
  return result.data as Envelope;
}

/** Decode a message body (UTF-8 JSON) and validate it. Throws `InvalidInputError` on either failure. */
export function decodeEnvelope(body: string): Envelope {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw new InvalidInputError("message body is not JSON", [error instanceof Error ? error.message : String(error)]);
  }
  return parseEnvelope(json);
}

export const encodeEnvelope = (envelope: Envelope): string => JSON.stringify(envelope);

/** The envelope the runtime stored in an outbox row of category "event". */
export function envelopeFromOutbox(row: Pick<NewOutboxRow, "id" | "category" | "payload">): Envelope {
  if (row.category !== "event")
    throw new InvalidInputError(`outbox row "${row.id}" is a ${row.category}, not an event`);
  return parseEnvelope(row.payload);
}
