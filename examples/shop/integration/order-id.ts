import type { Envelope } from "oncely";
import { InvalidInputError } from "oncely";
import { z } from "zod";

/**
 * The shop's order id format, the same over HTTP and on the bus. Order ids are `ord_` + hex in
 * this shop; anything URL-safe and short is accepted, nothing that could bend an address, and no
 * name every JavaScript object already carries (`__proto__`, `constructor`, `toString`...): an
 * id is used as a key and must never reach a prototype.
 */
export const orderIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 characters of letters, digits, _ or -")
  .refine((id) => !(id in Object.prototype), "must not be a name JavaScript objects carry (__proto__, constructor...)");

/**
 * The order an integration event is about: its `aggregateId`, in the shop's id format. Every
 * context reads the order id through this before keying anything by it; a message with another
 * id throws `InvalidInputError` (terminal: dead-lettered at once).
 */
export function orderIdOf(envelope: Envelope): string {
  const parsed = orderIdSchema.safeParse(envelope.aggregateId);
  if (!parsed.success) {
    throw new InvalidInputError(`event ${envelope.eventId} is not about a valid order id`, [
      `aggregateId: ${parsed.error.issues[0]?.message}`,
    ]);
  }
  return parsed.data;
}
