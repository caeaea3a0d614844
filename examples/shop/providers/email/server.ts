import { type Clock, type IdGenerator, systemClock } from "oncely";
import { seededRandom } from "oncely/testing";
import { z } from "zod";
import { type BaseFaults, baseFaultsSchema, drawFaults, FaultSettings, noBaseFaults } from "../shared/faults.js";
import {
  badRequest,
  canonicalJson,
  createProviderApp,
  injectedFailure,
  keyedRequest,
  lookupKeyOf,
} from "../shared/http.js";
import { JsonlLedger } from "../shared/ledger.js";

/**
 * A fake transactional-mail provider: accepts a message once per `Idempotency-Key` and can be
 * asked by key whether it sent it, which is what the seed asks of a mail vendor.
 */

export type EmailFaults = BaseFaults;
export const emailFaultsSchema = baseFaultsSchema;

export const emailRequestSchema = z.strictObject({
  to: z.email("must be an email address"),
  template: z.string().min(1, "must not be empty"),
  orderId: z.string().min(1, "must not be empty"),
});
export type EmailRequest = z.infer<typeof emailRequestSchema>;

export interface SentEmail extends EmailRequest {
  messageId: string;
  idempotencyKey: string;
  at: string;
}
export interface EmailLedger extends Record<string, object[]> {
  emails: SentEmail[];
}

export interface EmailProviderOptions {
  port?: number;
  host?: string;
  seed?: number;
  faults?: Partial<EmailFaults>;
  ledgerPath?: string | undefined;
  clock?: Clock;
  ids?: IdGenerator;
}

export interface EmailProvider {
  url: string;
  ledger: EmailLedger;
  faults(): EmailFaults;
  setFaults(faults: Partial<EmailFaults>): EmailFaults;
  close(): Promise<void>;
}

export async function startEmailProvider(options: EmailProviderOptions = {}): Promise<EmailProvider> {
  const clock = options.clock ?? systemClock;
  const random = seededRandom(options.seed ?? 1);
  const faults = new FaultSettings(emailFaultsSchema, noBaseFaults, options.faults);
  const ledger = new JsonlLedger<EmailLedger>(["emails"], options.ledgerPath);
  let counter = ledger.data.emails.length;
  const ids = options.ids ?? { next: () => `msg_${String(++counter).padStart(6, "0")}` };

  const byKey = new Map<string, { request: string; email: SentEmail }>();
  const remember = (email: SentEmail) => {
    const { to, template, orderId } = email;
    byKey.set(email.idempotencyKey, { request: canonicalJson({ to, template, orderId }), email });
  };
  for (const email of ledger.data.emails) remember(email);

  const provider = createProviderApp({ name: "email", faults, clock, ledger: () => ledger.data });
  const { app } = provider;

  app.post("/emails", async (request, reply) => {
    const parsed = keyedRequest(request, reply, emailRequestSchema);
    if (!parsed) return reply;
    const { key, body } = parsed;
    const plan = drawFaults(faults.get(), random);
    if (plan.fail) return injectedFailure(reply);

    const prior = byKey.get(key);
    if (prior) {
      const first = { request: prior.request, status: 202, body: { messageId: prior.email.messageId } };
      return provider.replay(request, reply, plan, key, first, body);
    }
    const email: SentEmail = {
      messageId: ids.next(),
      idempotencyKey: key,
      ...body,
      at: new Date(clock.now()).toISOString(),
    };
    // Sent before answering: a lost answer does not unsend it.
    ledger.append("emails", email);
    remember(email);
    return provider.answer(request, reply, plan, 202, { messageId: email.messageId });
  });

  app.get("/emails", async (request, reply) => {
    const key = lookupKeyOf(request);
    if (!key.ok) return reply.code(400).send(badRequest(key.issues));
    const found = byKey.get(key.value);
    if (!found) return reply.code(404).send({ error: `no email for Idempotency-Key "${key.value}"` });
    const { messageId, to, template, orderId } = found.email;
    return { messageId, status: "sent", to, template, orderId };
  });

  const url = await provider.listen(options.host ?? "127.0.0.1", options.port ?? 0);
  return {
    url,
    ledger: ledger.data,
    faults: () => faults.get(),
    setFaults: (update) => faults.set(update),
    close: () => provider.close(),
  };
}
