import { describe, expect, it } from "vitest";
import { sliceOf } from "../../../src/core/slices.js";
import { PUBLISHED_READER_SOURCE, publishedSliceSource } from "../../../src/journal/published.js";
import type { Journal } from "../../../src/journal/types.js";
import { parseEnvelope } from "../../../src/messaging/envelope.js";
import type { Delivery, DeliveryOutcome } from "../../../src/messaging/transport.js";
import { JournalTransport } from "../../../src/messaging/transports/journal.js";
import { MovableOwnership, moveSlices } from "../../support/movable-ownership.js";
import { LIFECYCLE, orderEvent } from "./orders.js";

const ack: DeliveryOutcome = { kind: "ack" };

/** Record every delivery's event id and attempt; answer with `answer` (default ack). */
function recorder(answer: (d: Delivery, eventId: string) => DeliveryOutcome = () => ack) {
  const seen: { eventId: string; attempt: number }[] = [];
  const handler = async (d: Delivery): Promise<DeliveryOutcome> => {
    const eventId = parseEnvelope(JSON.parse(d.body)).eventId;
    seen.push({ eventId, attempt: d.attempt });
    return answer(d, eventId);
  };
  return { seen, handler, ids: () => seen.map((s) => s.eventId) };
}

/** A fresh, migrated store; `reopen` opens it again as a restarted process would. */
export interface TransportStore {
  journal: Journal;
  reopen: () => Promise<Journal>;
}

/** The journal transport's contract on one back end; `store` gives a fresh store per test. */
export function journalTransportSuite(store: () => Promise<TransportStore>): void {
  const transportOn = (journal: Journal) => new JournalTransport({ journal, pollMs: 20 });

  it("delivers every event once per consumer by subject, those published before it subscribed too", async () => {
    const { journal } = await store();
    const transport = transportOn(journal);
    const placed = orderEvent("o1", 1);
    const paid = orderEvent("o1", 2);
    await transport.publish(placed, "shop.ordering.OrderPlaced");
    const all = recorder();
    const payments = recorder();
    const a = await transport.subscribe("all", { subjects: ["shop.>"] }, all.handler);
    const b = await transport.subscribe("payments", { subjects: ["shop.payment.>"] }, payments.handler);
    await transport.publish(paid, "shop.payment.PaymentProcessed");
    await transport.idle();
    expect(all.ids().sort()).toEqual([placed.eventId, paid.eventId].sort());
    expect(payments.ids()).toEqual([paid.eventId]);
    const head = (await journal.readPublished(0)).at(-1)?.position;
    // Both passed the whole log: an entry not for a consumer's subjects is settled for it too.
    expect(await journal.getCheckpoint("all", PUBLISHED_READER_SOURCE)).toBe(head);
    expect(await journal.getCheckpoint("payments", PUBLISHED_READER_SOURCE)).toBe(head);
    await a.stop();
    await b.stop();
    await transport.close();
  });

  it("stores a published message id once", async () => {
    const { journal } = await store();
    const transport = transportOn(journal);
    const seen = recorder();
    await transport.subscribe("once", { subjects: ["shop.>"] }, seen.handler);
    const placed = orderEvent("o2", 1);
    await transport.publish(placed, "shop.ordering.OrderPlaced");
    await transport.publish(placed, "shop.ordering.OrderPlaced");
    await transport.idle();
    expect(seen.ids()).toEqual([placed.eventId]);
    expect(await journal.readPublished(0)).toHaveLength(1);
    await transport.close();
  });

  it("resumes from its stored position in a new process: nothing settled again, nothing skipped", async () => {
    const { journal: first, reopen } = await store();
    const before = transportOn(first);
    const seen = recorder();
    const subscription = await before.subscribe("resume", { subjects: ["shop.>"] }, seen.handler);
    for (let v = 1; v <= 2; v++) await before.publish(orderEvent("o3", v), `shop.orders.v${v}`);
    await before.idle();
    await subscription.stop();
    // Published while no reader of that name runs.
    for (let v = 3; v <= 5; v++) await before.publish(orderEvent("o3", v), `shop.orders.v${v}`);
    await before.close();
    const again = await reopen();
    const after = transportOn(again);
    const later = recorder();
    await after.subscribe("resume", { subjects: ["shop.>"] }, later.handler);
    await after.idle();
    expect(seen.ids()).toEqual([1, 2].map((v) => orderEvent("o3", v).eventId));
    expect(later.ids()).toEqual([3, 4, 5].map((v) => orderEvent("o3", v).eventId));
    await after.close();
  });

  it("delivers a nak'ed event again with the next attempt; the position never passes an unsettled one", async () => {
    const { journal } = await store();
    const transport = transportOn(journal);
    const stuck = orderEvent("o4", 1);
    const fine = orderEvent("o4", 2);
    const seen = recorder((_d, eventId) => (eventId === stuck.eventId ? { kind: "nak", delayMs: 5 } : ack));
    const subscription = await transport.subscribe("nak", { subjects: ["shop.>"] }, seen.handler);
    await transport.publish(stuck, "shop.orders.a");
    await transport.publish(fine, "shop.orders.b");
    for (let i = 0; i < 400 && seen.seen.filter((s) => s.eventId === stuck.eventId).length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(seen.seen.filter((s) => s.eventId === stuck.eventId).map((s) => s.attempt)).toEqual(
      expect.arrayContaining([1, 2, 3]),
    );
    await subscription.stop();
    const [stuckAt] = await journal.readPublished(0);
    expect(await journal.getCheckpoint("nak", PUBLISHED_READER_SOURCE)).toBeLessThan(stuckAt?.position ?? 0);
    // A new reader of that name gets it again (and the acked one after it, which an inbox absorbs).
    const next = recorder();
    await transport.subscribe("nak", { subjects: ["shop.>"] }, next.handler);
    await transport.idle();
    expect(next.ids()).toEqual([stuck.eventId, fine.eventId]);
    await transport.close();
  });

  it("pending counts every entry the subscription has not passed, read or not, and is 0 once all are settled", async () => {
    const { journal } = await store();
    // A window of two entries: the third and fourth stay unread while the first two are held.
    const transport = new JournalTransport({ journal, pollMs: 20, batchSize: 2 });
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const seen = recorder();
    const held = async (d: Delivery) => {
      await gate;
      return seen.handler(d);
    };
    const subscription = await transport.subscribe("pending", { subjects: ["shop.>"], concurrency: 1 }, held);
    expect(await subscription.pending()).toBe(0);
    for (let v = 1; v <= 3; v++) await transport.publish(orderEvent("o5", v), `shop.orders.v${v}`);
    await transport.publish(orderEvent("o6", 1), "other.orders.v1");
    // Two read (one in the handler, one waiting for its slot), two not read yet (one not for it).
    for (let i = 0; i < 200 && (await subscription.pending()) !== 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await subscription.pending()).toBe(4);
    open();
    await transport.idle();
    expect(seen.ids()).toHaveLength(3);
    expect(await subscription.pending()).toBe(0);
    await transport.close();
  });

  describe("partitioned by slice (an ownership per reader)", () => {
    let COUNT = 64;
    /** Every order's lifecycle, published in rounds: order i's version v is the v-th round. */
    const orders = Array.from({ length: 24 }, (_, i) => `p${i}`);
    const sliceOfOrder = (order: string) => sliceOf(order, COUNT);
    const publishRound = async (transport: JournalTransport, v: number) => {
      for (const order of orders) await transport.publish(orderEvent(order, v), `shop.orders.${LIFECYCLE[v - 1]}`);
    };
    /** Per order, the versions a recorder saw, in the order it saw them. */
    const versions = (seen: { eventId: string }[]) => {
      const by = new Map<string, number[]>();
      for (const { eventId } of seen) {
        const [order, type] = eventId.split(":") as [string, string];
        by.set(order, [...(by.get(order) ?? []), LIFECYCLE.indexOf(type as never) + 1]);
      }
      return by;
    };
    const partitioned = (journal: Journal) => new JournalTransport({ journal, pollMs: 20 });
    const subscribeWith = (
      transport: JournalTransport,
      ownership: MovableOwnership,
      handler: (d: Delivery) => Promise<DeliveryOutcome>,
    ) => transport.subscribe("sliced", { subjects: ["shop.>"], ownership, concurrency: 1 }, handler);

    it("two readers with disjoint slices each get exactly their slices' events, once, in order", async () => {
      const { journal } = await store();
      COUNT = journal.sliceCount ?? 64;
      const all = Array.from({ length: COUNT }, (_, i) => i);
      const even = new MovableOwnership(
        COUNT,
        all.filter((i) => i % 2 === 0),
      );
      const odd = new MovableOwnership(
        COUNT,
        all.filter((i) => i % 2 === 1),
      );
      const [ta, tb] = [partitioned(journal), partitioned(journal)];
      const [a, b] = [recorder(), recorder()];
      await subscribeWith(ta, even, a.handler);
      await subscribeWith(tb, odd, b.handler);
      for (let v = 1; v <= 3; v++) await publishRound(ta, v);
      await Promise.all([ta.idle(), tb.idle()]);
      for (const [reader, own] of [
        [a, even],
        [b, odd],
      ] as const) {
        const mine = orders.filter((o) => own.owns(sliceOfOrder(o)));
        expect(mine.length).toBeGreaterThan(0);
        expect([...versions(reader.seen).keys()].sort()).toEqual([...mine].sort());
        for (const order of mine) expect(versions(reader.seen).get(order)).toEqual([1, 2, 3]);
      }
      expect(a.seen.length + b.seen.length).toBe(orders.length * 3);
      // Each reader stored a position per slice of its own that had events, past their last one.
      const log = await journal.readPublished(0);
      for (const entry of log) {
        expect(await journal.getCheckpoint("sliced", publishedSliceSource(entry.slice))).toBeGreaterThanOrEqual(
          entry.position,
        );
      }
      await ta.close();
      await tb.close();
    });

    it("a slice moving between them mid-stream loses nothing: the new owner resumes at the stored position", async () => {
      const { journal } = await store();
      COUNT = journal.sliceCount ?? 64;
      const first = new MovableOwnership(
        COUNT,
        Array.from({ length: COUNT }, (_, i) => i),
      );
      const second = new MovableOwnership(COUNT, []);
      const [ta, tb] = [partitioned(journal), partitioned(journal)];
      // The slices of a few orders move; the others stay.
      const moving = [...new Set(orders.slice(0, 6).map(sliceOfOrder))];
      // One order of a moving slice has its version 2 refused (nak) by the first owner: read, not settled.
      const stuck = orders.find((o) => moving.includes(sliceOfOrder(o))) as string;
      const stuckId = orderEvent(stuck, 2).eventId;
      const a = recorder((_d, id) => (id === stuckId ? { kind: "nak", delayMs: 60_000 } : ack));
      const b = recorder();
      await subscribeWith(ta, first, a.handler);
      await subscribeWith(tb, second, b.handler);
      await publishRound(ta, 1);
      await publishRound(ta, 2);
      await publishRound(ta, 3);
      // The first owner handled everything but the stuck event before the move.
      const before = orders.flatMap((o) => [1, 2, 3].map((v) => orderEvent(o, v).eventId));
      for (let i = 0; i < 2000 && !before.every((id) => a.ids().includes(id)); i++)
        await new Promise((r) => setTimeout(r, 5));
      expect(before.filter((id) => !a.ids().includes(id))).toEqual([]);
      await moveSlices(first, second, moving);
      await publishRound(ta, 4);
      await Promise.all([ta.idle(), tb.idle()]);
      const log = await journal.readPublished(0);
      const stuckAt = log.find((e) => parseEnvelope(JSON.parse(e.body)).eventId === stuckId)?.position;
      expect(stuckAt).toBeDefined();
      const byA = versions(a.seen);
      const byB = versions(b.seen);
      for (const order of orders) {
        // Nothing lost: every version of every order was delivered.
        const seen = [...(byA.get(order) ?? []), ...(byB.get(order) ?? [])];
        expect(new Set(seen), order).toEqual(new Set([1, 2, 3, 4]));
        const slice = sliceOfOrder(order);
        if (!moving.includes(slice)) {
          expect(byB.get(order), order).toBeUndefined();
          expect(byA.get(order), order).toEqual([1, 2, 3, 4]);
        } else if (slice !== sliceOfOrder(stuck)) {
          // A moved slice with nothing in flight: the new owner starts exactly where the old one stopped.
          expect(byA.get(order), order).toEqual([1, 2, 3]);
          expect(byB.get(order), order).toEqual([4]);
        }
      }
      // The stuck event was not acknowledged by the first owner: the new owner delivers its slice
      // again from just below it (in position order), and nothing of that slice before it.
      const again = log
        .filter((e) => e.slice === sliceOfOrder(stuck) && e.position >= (stuckAt as number))
        .map((e) => parseEnvelope(JSON.parse(e.body)).eventId);
      const bInStuckSlice = b.ids().filter((id) => sliceOfOrder(id.split(":")[0] as string) === sliceOfOrder(stuck));
      expect(bInStuckSlice).toEqual(again);
      expect(byB.get(stuck)).toEqual([2, 3, 4]);
      expect(await journal.getCheckpoint("sliced", publishedSliceSource(sliceOfOrder(stuck)))).toBeGreaterThanOrEqual(
        stuckAt as number,
      );
      await ta.close();
      await tb.close();
    });
  });
}
