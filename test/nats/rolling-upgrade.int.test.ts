import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Envelope } from "../../src/messaging/envelope.js";
import type { Subscription } from "../../src/messaging/transport.js";
import { acceptedV1, acceptedV2, paid, salesRelease } from "../evolution/fixtures/deferral.js";
import { probeNats } from "../support/services.js";
import { natsFixture, waitFor } from "./support/nats.js";

const nats = await probeNats();

/**
 * A rolling upgrade on NATS: a release 1 and a release 2 worker share the `sales` durable (one
 * JetStream consumer, each message handed to one of them) and one journal, while Ordering already
 * publishes release 2 payloads. Release 1 cannot read those; it must leave them to release 2
 * (nak, and again on every redelivery it gets) rather than use up their deliveries and
 * dead-letter them, where release 2 would never see them.
 */
describe.skipIf(!nats.available)(`a rolling upgrade on NATS JetStream ${nats.reason}`, () => {
  let fx: Awaited<ReturnType<typeof natsFixture>>;
  const subscriptions: Subscription[] = [];
  beforeAll(async () => {
    fx = await natsFixture("upgrade");
  });
  afterAll(async () => {
    for (const s of subscriptions) await s.stop().catch(() => {});
    await fx?.cleanup();
  });

  it("messages at a version only release 2 reads are all handled by release 2, none dead-lettered, none handled by release 1", async () => {
    const journal = memoryJournal();
    const budget = { maxDeliveries: 3, retryBaseMs: 10, retryMaxMs: 50, deferBaseMs: 20, deferMaxMs: 200 };
    const v1 = salesRelease(1, journal, budget);
    const v2 = salesRelease(2, journal, budget);
    const subjects = [`${fx.prefix}.ordering.>`];
    const subject = (e: Envelope) => `${fx.prefix}.ordering.${e.type}`;

    // Release 1 alone first: orders placed before the upgrade, and release 2 payloads in flight.
    const release1 = await fx.open();
    const seenByV1 = new Map<string, number>();
    subscriptions.push(
      await release1.subscribe("sales", { subjects, maxDeliveries: budget.maxDeliveries }, (d) => {
        const { eventId } = JSON.parse(d.body) as Envelope;
        seenByV1.set(eventId, Math.max(seenByV1.get(eventId) ?? 0, d.attempt));
        return v1.consumer.deliver(d);
      }),
    );
    const old = ["o1", "o2", "o3"];
    const fresh = ["n1", "n2", "n3", "n4", "n5", "n6", "n7"];
    const events = [...old.map(acceptedV1), ...fresh.map(acceptedV2), ...[...old, ...fresh].map(paid)];
    for (const e of events) await fx.transport.publish(e, subject(e));
    const newer = fresh.map((id) => acceptedV2(id).eventId);

    // Release 1 has had every release 2 message past its delivery budget (3): counted against it,
    // each would be a dead letter by now.
    await waitFor(
      async () =>
        newer.every((id) => (seenByV1.get(id) ?? 0) > budget.maxDeliveries + 1) ||
        (await journal.listDeadLetters()).length > 0,
      "release 1 to get every release 2 message past its delivery budget",
    );
    expect(await journal.listDeadLetters()).toEqual([]);
    // The sequence behind each unread version parks, as behind any gap.
    await waitFor(async () => (await journal.listParked("sales")).length === fresh.length, "the paid events to park");
    expect(v1.projected.filter((id) => newer.includes(id))).toEqual([]);

    // Release 2 joins on the same durable while release 1 keeps running.
    const release2 = await fx.open();
    subscriptions.push(await v2.consumer.subscribe(release2, { subjects }));
    const settled = async () => {
      const docs = await journal.listDocuments("sales");
      return docs.length === old.length + fresh.length && docs.every((d) => (d.doc as { paid: boolean }).paid);
    };
    await waitFor(settled, "every order to be handled");

    expect(await journal.listDeadLetters()).toEqual([]);
    expect(await journal.listParked("sales")).toEqual([]);
    expect(v1.projected.filter((id) => newer.includes(id))).toEqual([]);
    expect(new Set(v2.projected.filter((id) => newer.includes(id)))).toEqual(new Set(newer));
    for (const id of fresh) {
      expect((await journal.getDocument("sales", id))?.doc, id).toEqual({
        email: `${id}@example.com`,
        channel: "app",
        paid: true,
      });
      expect(await journal.getCheckpoint("sales", `ordering/${id}`)).toBe(2);
    }
    for (const id of old) expect((await journal.getDocument("sales", id))?.doc).toMatchObject({ channel: "web" });
    // Release 1 said so: once per message at warn, and on every deferral in its metric.
    const warned = v1.logger.warnings.filter((w) => /newer release/.test(w.msg)).map((w) => w.obj.eventId);
    expect([...warned].sort()).toEqual([...newer].sort());
    expect(await v1.deferrals()).toBeGreaterThanOrEqual(newer.length * (budget.maxDeliveries + 1));
    expect(await v2.deferrals()).toBe(0);
  });
});
