import { z } from "zod";
import { InvalidInputError } from "../core/errors.js";
import type { OutboxRow } from "../journal/types.js";

/**
 * The integration-event envelope, validated at both ends: by the relay before it publishes
 * (a malformed outbox row never reaches the broker) and by every consumer before it handles
 * (a malformed message goes to dead letters instead of crashing anything).
 *
 * `occurredAt` is for audit only: no ordering decision ever reads it (clocks of other services drift).
 * Order, where a consumer needs it, comes from `aggregateVersion` of one producer stream.
 */
export const envelopeSchema = z.object({
  eventId: z.string().min(1),
  type: z.string().min(1),
  source: z.string().min(1),
  aggregateId: z.string().min(1),
  aggregateVersion: z.number().int().positive().optional(),
  occurredAt: z.string().min(1),
  correlationId: z.string().min(1),
  causationId: z.string().min(1),
  payload: z.unknown(),
  /** Id of the key that signed the envelope (see signing.ts); absent on an unsigned one. */
  keyId: z.string().min(1).optional(),
  /** HMAC-SHA256 (base64url) over the canonical envelope without this field. */
  signature: z.string().min(1).optional(),
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
export function envelopeFromOutbox(row: OutboxRow): Envelope {
  if (row.category !== "event")
    throw new InvalidInputError(`outbox row "${row.id}" is a ${row.category}, not an event`);
  return parseEnvelope(row.payload);
}
