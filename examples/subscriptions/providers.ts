/**
 * In-memory stand-ins for a card processor and a mailer, with the APIs such providers have: a charge
 * under an idempotency key, a lookup of a charge by that key, and a send. Not part of the counted
 * app (the Restate version calls the same clients).
 */
export interface Charge {
  id: string;
  customer: string;
  amount: number;
}

export function cardProcessor() {
  const charges = new Map<string, Charge>();
  return {
    charges,
    /** Charges once per key; amounts over 10,000 are declined. */
    async charge(customer: string, amount: number, idempotencyKey: string): Promise<Charge> {
      if (amount > 10_000) throw new Error("card declined");
      const charge = charges.get(idempotencyKey) ?? { id: `ch_${charges.size + 1}`, customer, amount };
      charges.set(idempotencyKey, charge);
      return charge;
    },
    async find(idempotencyKey: string): Promise<Charge | undefined> {
      return charges.get(idempotencyKey);
    },
  };
}

export function mailer() {
  const sent: { to: string; text: string }[] = [];
  return {
    sent,
    async send(to: string, text: string): Promise<{ id: string }> {
      sent.push({ to, text });
      return { id: `mail_${sent.length}` };
    },
  };
}

export const cards = cardProcessor();
export const mail = mailer();
