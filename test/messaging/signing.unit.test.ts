import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { DeadLetters } from "../../src/messaging/dead-letters.js";
import { type Envelope, encodeEnvelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import {
  AuthenticityError,
  brokerMessageId,
  type Keyring,
  keyring,
  type SigningKey,
  signerFor,
  verifierFor,
} from "../../src/messaging/signing.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent, perEventCount, producer } from "./support/orders.js";

const key = (id: string): SigningKey => ({ id, secret: createHash("sha256").update(`test secret ${id}`).digest() });
const orders = keyring("orders-1", [key("orders-1")]);
const billing = keyring("billing-1", [key("billing-1")]);
const accepted: Record<string, Keyring> = { orders, billing };

async function rejectionCount(consumer: Consumer, reason: string): Promise<number> {
  const metric = await consumer.metrics.registry.getSingleMetric("oncely_consumer_rejected_total")?.get();
  return metric?.values.find((v) => v.labels.consumer === consumer.name && v.labels.reason === reason)?.value ?? 0;
}

describe("signing and verifying envelopes", () => {
  const sign = signerFor({ orders, billing }).sign;
  const verify = verifierFor(accepted, { subjectPrefix: "shop" }).verify;
  const refusal = (envelope: Envelope, subject = "shop.orders.PaymentProcessed") => {
    try {
      verify(envelope, subject);
      return "accepted";
    } catch (error) {
      return error instanceof AuthenticityError ? error.reason : `other: ${String(error)}`;
    }
  };

  it("accepts what the source's key signed, whatever the key order of the envelope", () => {
    const signed = sign(orderEvent("o1", 2));
    expect(signed.keyId).toBe("orders-1");
    const reordered = JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(signed).reverse()))) as Envelope;
    expect(refusal(reordered)).toBe("accepted");
  });

  it("refuses unsigned, tampered, unknown-key, other-source-key and wrong-subject envelopes", () => {
    const signed = sign(orderEvent("o1", 2));
    expect(refusal(orderEvent("o1", 2))).toBe("unsigned");
    // A real message replayed with a modified payload.
    expect(refusal({ ...signed, payload: { orderId: "o1", amount: 1 } })).toBe("bad-signature");
    expect(refusal({ ...signed, aggregateVersion: 3 })).toBe("bad-signature");
    expect(refusal({ ...signed, keyId: "orders-9" })).toBe("unknown-key");
    // Signed with a valid key of another source: billing's key may not vouch for "orders".
    const byBilling = signerFor({ orders: billing }).sign(orderEvent("o1", 2));
    expect(byBilling.keyId).toBe("billing-1");
    expect(refusal(byBilling)).toBe("unknown-key");
    // Billing signing as billing, but on the orders subject.
    const billingEvent = sign(orderEvent("o1", 2, "billing"));
    expect(refusal(billingEvent, "shop.billing.PaymentProcessed")).toBe("accepted");
    expect(refusal(billingEvent, "shop.orders.PaymentProcessed")).toBe("source-mismatch");
    // A payload key the canonical form must not lose.
    const proto = JSON.parse(
      encodeEnvelope(signed).replace('"payload":{', '"payload":{"__proto__":{"x":1},'),
    ) as Envelope;
    expect(refusal(proto)).toBe("bad-signature");
  });

  it("rotation: the new key signs, the old key still verifies", () => {
    const old = sign(orderEvent("o1", 1));
    const rotated = keyring("orders-2", [key("orders-2"), key("orders-1")]);
    const fresh = signerFor({ orders: rotated }).sign(orderEvent("o1", 2));
    expect(fresh.keyId).toBe("orders-2");
    const afterRotation = verifierFor({ orders: rotated }).verify;
    expect(() => afterRotation(old)).not.toThrow();
    expect(() => afterRotation(fresh)).not.toThrow();
    // A verifier not yet told about the new key refuses it (hence: verifiers first, then signers).
    expect(() => verifierFor({ orders }).verify(fresh)).toThrow(/unknown-key/);
  });

  it("refuses bad keyrings and sources without a key, naming the problem", () => {
    expect(() => keyring("k", [{ id: "k", secret: new Uint8Array(8) }])).toThrow(/8 bytes; at least 32/);
    expect(() => keyring("k2", [key("k1")])).toThrow(/current key "k2" is not among/);
    expect(() => keyring("k1", [key("k1"), key("k1")])).toThrow(/appears twice/);
    expect(() => sign(orderEvent("o1", 1, "shipping"))).toThrow(/no signing key for source "shipping"/);
  });
});

describe("a consumer with a verifier (in-process transport)", () => {
  function setup() {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const transport = new InProcessTransport({ clock });
    const metrics = messagingMetrics();
    const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds("ev") });
    const relay = new Relay({
      journal,
      transport,
      clock,
      subjectPrefix: "shop",
      metrics,
      signer: signerFor({ orders }),
    });
    const consumer = new Consumer({
      name: "count",
      journal,
      handler: perEventCount,
      clock,
      metrics,
      verifier: verifierFor(accepted, { subjectPrefix: "shop" }),
    });
    return { journal, transport, runtime, relay, consumer };
  }

  it("handles what the relay signed and dead-letters every forgery with its reason, handling none", async () => {
    const { journal, transport, runtime, relay, consumer } = setup();
    await consumer.subscribe(transport, { subjects: ["shop.>"] });
    await runtime.send("producer/a", { type: "Record", event: "OrderPlaced" });
    await relay.drain();
    await transport.idle();
    const real = (await journal.listOutbox({ category: "event" })).map((r) => r.payload as Envelope)[0] as Envelope;
    expect((await journal.listDocuments("per-event")).map((d) => d.id)).toEqual([real.eventId]);

    const signedReal = signerFor({ orders }).sign(real);
    const forged: [string, string, Envelope][] = [
      ["unsigned", "shop.orders.PaymentProcessed", orderEvent("a", 2)],
      ["bad-signature", "shop.orders.OrderPlaced", { ...signedReal, payload: { n: 99 } }],
      ["unknown-key", "shop.orders.OrderShipped", signerFor({ orders: billing }).sign(orderEvent("a", 4))],
      [
        "source-mismatch",
        "shop.orders.PaymentProcessed",
        signerFor({ billing }).sign({ ...orderEvent("a", 2), source: "billing" }),
      ],
    ];
    for (const [reason, subject, envelope] of forged)
      transport.publishRaw(subject, encodeEnvelope(envelope), `forged-${reason}`);
    await transport.idle();

    expect((await journal.listDocuments("per-event")).map((d) => d.id)).toEqual([real.eventId]);
    expect((await journal.getDocument("per-event", real.eventId))?.doc).toMatchObject({ count: 1 });
    const letters = await journal.listDeadLetters({ consumer: "count" });
    expect(letters.map((l) => l.error.split(":")[0]).sort()).toEqual(forged.map(([reason]) => reason).sort());
    for (const [reason] of forged) expect(await rejectionCount(consumer, reason)).toBe(1);
    // Rejected, not handled: nothing of theirs reached the inbox.
    for (const [, , envelope] of forged.slice(0, 1))
      expect(await journal.getInbox("count", envelope.eventId)).toBeUndefined();
    // A replay by an operator goes through the verifier too.
    const dead = new DeadLetters(journal, { consumers: [consumer] });
    await expect(dead.replay(letters[0]?.id as string)).rejects.toThrow(AuthenticityError);
    expect(consumer.stats.applied).toBe(1);
  });

  it("a forgery under a real eventId does not take the real event's broker or dead-letter slot", async () => {
    const { journal, transport, runtime, relay, consumer } = setup();
    await consumer.subscribe(transport, { subjects: ["shop.>"] });
    // Published before the real event, with the id the real one will have.
    const eventId = "a:1:OrderPlaced";
    await transport.publish({ ...orderEvent("a", 1), eventId, payload: { n: 666 } }, "shop.orders.OrderPlaced");
    await transport.idle();
    await runtime.send("producer/a", { type: "Record", event: "OrderPlaced" });
    await relay.drain();
    await transport.idle();
    const rows = await journal.listOutbox({ category: "event" });
    expect(rows.map((r) => (r.payload as Envelope).eventId)).toEqual([eventId]);
    expect((await journal.getDocument("per-event", eventId))?.doc).toMatchObject({ count: 1, type: "OrderPlaced" });
    expect((await journal.listDeadLetters({ consumer: "count" })).map((l) => l.messageId)).toEqual([eventId]);
  });

  it("a real event replayed with a modified payload at once is not dropped by the broker's dedup: it is refused", async () => {
    const { journal, transport, runtime, relay, consumer } = setup();
    await consumer.subscribe(transport, { subjects: ["shop.>"] });
    await runtime.send("producer/a", { type: "Record", event: "OrderPlaced" });
    await relay.drain();
    await transport.idle();
    // What the relay published: the outbox row's envelope under the producer's key (HMAC is deterministic).
    const [row] = await journal.listOutbox({ category: "event" });
    const real = signerFor({ orders, billing }).sign(row?.payload as Envelope);
    const modified = { ...real, payload: { n: 666 } };
    // The same row republished keeps its dedup id; any change gives another one.
    expect(brokerMessageId({ ...real })).toBe(brokerMessageId(real));
    expect(brokerMessageId(modified)).not.toBe(brokerMessageId(real));
    await transport.publish(modified, "shop.orders.OrderPlaced");
    await transport.idle();
    expect(consumer.stats.applied).toBe(1);
    expect(await rejectionCount(consumer, "bad-signature")).toBe(1);
  });

  it("a relay without a key for a source publishes nothing and keeps the row, naming the source", async () => {
    const { journal, transport, runtime } = setup();
    const relay = new Relay({
      journal,
      transport,
      subjectPrefix: "shop",
      metrics: messagingMetrics(),
      signer: signerFor({ billing }),
    });
    await runtime.send("producer/a", { type: "Record", event: "OrderPlaced" });
    await relay.runOnce();
    expect(transport.stats.published).toBe(0);
    const [row] = await journal.listOutbox({ category: "event" });
    expect(row).toMatchObject({ status: "pending", lastError: 'no signing key for source "orders"' });
  });
});
