import { lookupMatching, succeeded } from "oncely";
import { z } from "zod";

import { emailEffect } from "./declarations.js";
import { findRecord, type HttpHandlerOptions, policyOf, runRequest, sameRequest } from "./http.js";

const resultSchema = z.object({ messageId: z.string().min(1) }).transform(({ messageId }) => ({ messageId }));
const recordSchema = z.object({
  messageId: z.string().min(1),
  status: z.literal("sent"),
  to: z.string(),
  template: z.string(),
  orderId: z.string(),
});

/**
 * Sends mail through the email provider: `POST /emails` with the effect key (one per business
 * mail: `order:42:confirmation-email`, `order:42:shipping-email`) as `Idempotency-Key`.
 *
 * Failure window: between the provider accepting the mail and the commit of `...EmailSent`, a
 * crash makes the dispatcher send again with the same key; the provider answers the same
 * `messageId` and sends nothing new.
 *
 * @example
 * const email = createEmailHandler({ baseUrl: provider.url });
 */
export function createEmailHandler(options: HttpHandlerOptions) {
  return emailEffect.implement({
    policy: policyOf(options),
    run: (input, context) =>
      runRequest(options, "/emails", input, context.idempotencyKey, context.signal, resultSchema),
    lookup: lookupMatching({
      find: (key, { signal }) => findRecord(options, "/emails", key, signal, recordSchema),
      matches: ({ to, template, orderId }, input) => sameRequest({ to, template, orderId }, input),
      outcome: (record) => succeeded({ messageId: record.messageId }),
    }),
  });
}
