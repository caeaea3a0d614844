import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  forgedEarlyShipment,
  forgedOrderPlaced,
  forgedPaymentFailed,
  forgedPaymentProcessed,
} from "../../examples/shop/contexts/forgeries.js";
import {
  CONSUMER_NAMES,
  createShopTransport,
  SHOP_ACTORS,
  shopContexts,
  shopIntegration,
} from "../../examples/shop/contexts.js";
import { SHOP_SUBJECT_PREFIX } from "../../examples/shop/integration/events.js";
import { devShopKeys } from "../../examples/shop/integration/keys.js";
import {
  CONSUMER_USER,
  NATS_USERS,
  type NatsPasswords,
  natsServerConfig,
} from "../../examples/shop/integration/nats-users.js";
import type { OrderState } from "../../examples/shop/ordering/state.js";
import { sequentialIds } from "../../src/core/clock.js";
import { DEFAULT_SLICE_COUNT, sliceOf } from "../../src/core/slices.js";
import { createHost } from "../../src/host/host.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { type Envelope, encodeEnvelope } from "../../src/messaging/envelope.js";
import { signerFor } from "../../src/messaging/signing.js";
import { subjectFor } from "../../src/messaging/subjects.js";
import type { Transport } from "../../src/messaging/transport.js";
import { connectNats } from "../../src/nats/connection.js";
import { freePort, PrivateNatsServer, waitFor } from "../nats/support/nats.js";

/**
 * The shop on a private nats-server started with the shop's authorization config (its own port,
 * store directory and stream name, so nothing collides with the shared broker or stream `SHOP`).
 */
const binary = existsSync("/usr/sbin/nats-server");
const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, randomBytes(12).toString("hex")])) as NatsPasswords;
/** Stands for a leaked credential or a broker without authorization: may publish on all of `shop.>`. */
const intruder = { user: "intruder", pass: randomBytes(12).toString("hex") };
const STREAM = `SHOP_AUTH_${process.pid}`;

describe.skipIf(!binary)("the shop's NATS users (private nats-server with authorization)", () => {
  let server: PrivateNatsServer;
  const connections: NatsConnection[] = [];
  const connectAs = async (user: string, pass: string) => {
    const nc = await connectNats(server.url, { user, pass, maxReconnectAttempts: 0 });
    connections.push(nc);
    return nc;
  };

  beforeAll(async () => {
    server = new PrivateNatsServer(await freePort(), {
      config: (storeDir, port) =>
        natsServerConfig({ port, storeDir, passwords }).replace(
          "  users: [\n",
          `  users: [\n    { user: "${intruder.user}", password: "${intruder.pass}", permissions: { publish: { allow: ["shop.>", "$JS.API.>"] }, subscribe: { allow: ["_INBOX.>"] } } },\n`,
        ),
      probe: { user: "views", pass: passwords.views },
    });
    await server.start();
    const admin = await connectAs("ordering", passwords.ordering);
    await (await jetstreamManager(admin)).streams.add({
      name: STREAM,
      subjects: ["shop.>"],
      storage: "memory" as never,
    });
  });
  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => {});
    await server?.dispose();
  });

  it("refuses a context publishing on another context's subject, and anyone without a password", async () => {
    const payment = jetstream(await connectAs("payment", passwords.payment));
    const forged = forgedOrderPlaced("x");
    await expect(
      payment.publish("shop.ordering.OrderPlaced", encodeEnvelope(forged), { timeout: 2000 }),
    ).rejects.toThrow(/permission/i);
    const views = jetstream(await connectAs("views", passwords.views));
    await expect(views.publish("shop.payment.PaymentProcessed", "{}", { timeout: 2000 })).rejects.toThrow(
      /permission/i,
    );
    // Its own subject is fine.
    const ack = await payment.publish("shop.payment.PaymentFailed", "{}", { timeout: 2000 });
    expect(ack.stream).toBe(STREAM);
    const jsm = await jetstreamManager(connections[0] as NatsConnection);
    const info = await jsm.streams.info(STREAM, { subjects_filter: ">" });
    expect(Object.keys(info.state.subjects ?? {})).toEqual(["shop.payment.PaymentFailed"]);
    await expect(connectNats(server.url, { maxReconnectAttempts: 0, timeout: 1000 })).rejects.toThrow(/authorization/i);
    await expect(connectAs("payment", "wrong")).rejects.toThrow(/authorization/i);
  });

  it("runs the shop's contexts as their users, and dead-letters forgeries that the broker let through", async () => {
    expect(Object.keys(CONSUMER_USER).sort()).toEqual(Object.values(CONSUMER_NAMES).sort());
    // What the first test stored (a non-envelope) is not what this one is about.
    await (await jetstreamManager(connections[0] as NatsConnection)).streams.purge(STREAM);
    const journal = memoryJournal();
    const transport: Transport = await createShopTransport({
      kind: "nats",
      natsUrl: server.url,
      natsPasswords: passwords,
      stream: STREAM,
    });
    const registry = new Registry();
    // The shop's relay and consumers on that transport; no handler: the payment stays Pending.
    const host = createHost({
      journal,
      actors: SHOP_ACTORS,
      ids: sequentialIds("e"),
      transport,
      registry,
      ...shopIntegration({ journal }),
    });
    const { runtime } = host;
    const contexts = shopContexts(host, { registry, transport });
    await host.start();
    try {
      // A real order: the ordering user publishes OrderPlaced, the payment user's consumer takes it.
      await runtime.send(
        "order/p1",
        {
          type: "PlaceOrder",
          customerEmail: "p1@example.com",
          currency: "EUR",
          lines: [{ sku: "book", quantity: 1, unitPrice: 1250 }],
        },
        { messageId: "place:p1" },
      );
      await waitFor(async () => (await journal.listStreams("payment/")).includes("payment/p1"), "payment/p1 requested");

      // Forgeries from the intruder, each on the subject of the context it impersonates.
      const nc = await connectAs(intruder.user, intruder.pass);
      const js = jetstream(nc);
      const keys = devShopKeys();
      const forgeries: Envelope[] = [
        forgedOrderPlaced("x1"),
        forgedPaymentProcessed("p1"),
        forgedPaymentFailed("p1"),
        forgedEarlyShipment("p1"),
      ];
      // The same PaymentProcessed, signed with a valid key of another context (shipping's).
      const byShipping = signerFor({ payment: keys.shipping }).sign(forgeries[1] as Envelope);
      for (const forged of [...forgeries, byShipping]) {
        // The shop's stream is partitioned by slice: a forger writes the subjects its consumers read.
        const wire = `${subjectFor(SHOP_SUBJECT_PREFIX, forged)}.s${sliceOf(forged.aggregateId, DEFAULT_SLICE_COUNT)}`;
        await js.publish(wire, encodeEnvelope(forged), { timeout: 2000 });
      }

      // ordering, fulfillment, views and timeline see all five; payment only `shop.ordering.>`.
      const expected = 4 * 5 + 1;
      await waitFor(async () => (await journal.listDeadLetters({})).length >= expected, "every forgery dead-lettered");
      const letters = await journal.listDeadLetters({});
      expect(letters).toHaveLength(expected);
      for (const letter of letters) expect(letter.error).toMatch(/^(unsigned|unknown-key): /);

      expect(await journal.listStreams("payment/")).toEqual(["payment/p1"]);
      // Fulfillment saw the real OrderPlaced only: no StartShipping was ever sent.
      expect(await journal.listOutbox({ category: "message" })).toEqual([]);
      const order = (await runtime.state<OrderState>("order/p1")).state;
      expect(order.payment.status).toBe("Pending");
      expect(order.shipping.status).toBe("NotRequested");
      const metric = await contexts.metrics.registry.getSingleMetric("oncely_consumer_rejected_total")?.get();
      expect(metric?.values.reduce((n, v) => n + v.value, 0)).toBe(expected);
    } finally {
      await host.stop();
      await transport.close();
    }
  });
});
