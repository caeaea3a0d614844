import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { type Envelope, encodeEnvelope } from "../../src/messaging/envelope.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { Relay } from "../../src/messaging/relay.js";
import { keyring, type SigningKey, signerFor, verifierFor } from "../../src/messaging/signing.js";
import { subjectFor } from "../../src/messaging/subjects.js";
import { orderEvent, perEventCount, producer } from "../messaging/support/orders.js";
import { probeNats } from "../support/services.js";
import { natsFixture, waitFor } from "./support/nats.js";

const nats = await probeNats();
const key = (id: string): SigningKey => ({ id, secret: createHash("sha256").update(`nats test ${id}`).digest() });

describe.skipIf(!nats.available)(`signed envelopes on NATS JetStream ${nats.reason}`, () => {
  let fx: Awaited<ReturnType<typeof natsFixture>>;
  beforeAll(async () => {
    fx = await natsFixture("signing");
  });
  afterAll(async () => {
    await fx?.cleanup();
  });

  it("handles what was signed before and after a key rotation, and dead-letters forgeries and tampered replays", async () => {
    const journal = memoryJournal();
    const metrics = messagingMetrics();
    const runtime = createRuntime({ journal, actors: [producer], ids: sequentialIds("e") });
    const before = keyring("orders-1", [key("orders-1")]);
    // Rotation step 1 (verifiers first): the consumer accepts both keys; step 2: the producer signs with the new one.
    const rotated = keyring("orders-2", [key("orders-2"), key("orders-1")]);
    const billing = keyring("billing-1", [key("billing-1")]);
    const consumer = new Consumer({
      name: "signed",
      journal,
      handler: perEventCount,
      metrics,
      verifier: verifierFor({ orders: rotated, billing }, { subjectPrefix: fx.prefix }),
    });
    const sub = await consumer.subscribe(fx.transport, { subjects: [`${fx.prefix}.>`] });
    const relay = (ring: typeof before) =>
      new Relay({
        journal,
        transport: fx.transport,
        subjectPrefix: fx.prefix,
        metrics,
        signer: signerFor({ orders: ring }),
      });

    await runtime.send("producer/a", { type: "Record", event: "OrderPlaced" });
    await relay(before).drain();
    await runtime.send("producer/a", { type: "Record", event: "PaymentProcessed" });
    await relay(rotated).drain();
    await waitFor(async () => (await journal.listDocuments(perEventCount.collection)).length === 2, "both applied");

    const [first] = await journal.listOutbox({ category: "event" });
    const signedFirst = signerFor({ orders: before }).sign(first?.payload as Envelope);
    const forgeries: [string, Envelope][] = [
      ["unsigned", orderEvent("a", 3)],
      ["tampered", { ...signedFirst, eventId: "a:again", payload: { n: 999 } }],
      ["other source's key", signerFor({ orders: billing }).sign(orderEvent("a", 4))],
    ];
    for (const [label, forged] of forgeries)
      await fx.transport.publishRaw(subjectFor(fx.prefix, forged), encodeEnvelope(forged), label);
    // Billing's own event, validly signed, but on the orders subject.
    const misrouted = signerFor({ billing }).sign(orderEvent("a", 5, "billing"));
    await fx.transport.publishRaw(`${fx.prefix}.orders.OrderDelivered`, encodeEnvelope(misrouted), "misrouted");

    await waitFor(async () => (await journal.listDeadLetters({})).length === 4, "four dead letters");
    await sub.stop();
    expect((await journal.listDeadLetters({})).map((l) => l.error.split(":")[0]).sort()).toEqual([
      "bad-signature",
      "source-mismatch",
      "unknown-key",
      "unsigned",
    ]);
    const docs = await journal.listDocuments(perEventCount.collection);
    expect(docs.map((d) => [d.id, (d.doc as { count: number }).count])).toEqual([
      ["a:1:OrderPlaced", 1],
      ["a:2:PaymentProcessed", 1],
    ]);
    expect(consumer.stats.applied).toBe(2);
    await fx.transport.deleteConsumer("signed");
  });
});
