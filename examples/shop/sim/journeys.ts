import type { Envelope } from "oncely";
import { Consumer, defineProjection, messagingMetrics } from "oncely";
import { encodeEnvelope } from "oncely/advanced";
import type { Invariant, SimEnv, SimWorker } from "oncely/testing";
import { sequentialIds } from "oncely/testing";
import { Registry } from "prom-client";
import { isIntegrationEventType, SHOP_SUBJECT_PREFIX } from "../integration/events.js";
import { orderIdOf } from "../integration/order-id.js";

/**
 * A sequenced projection fed by several source streams into one document: the order's journey,
 * one document per order holding, per producer stream (ordering, payment, shipping...), the
 * versions it applied in order. The shop's own timeline keeps one document per source stream
 * precisely because a sequenced consumer serialises per source stream only; this one does not,
 * so it holds the consumer to its document guard: two events of different sources handled at
 * once must both land. Two instances of one consumer name share the journal (a second worker),
 * and each turn hands several messages to them at once.
 */
export const JOURNEYS_CONSUMER = "sim-order-journeys";

export interface JourneyDoc {
  orderId: string;
  /** Per source stream, the event ids applied, in aggregateVersion order. */
  bySource: Record<string, string[]>;
}

export const orderJourneys = defineProjection<JourneyDoc>({
  collection: "sim-order-journeys",
  key: (envelope) => (isIntegrationEventType(envelope.type) ? orderIdOf(envelope) : undefined),
  project(current, envelope) {
    const doc = current ?? { orderId: envelope.aggregateId, bySource: {} };
    const applied = doc.bySource[envelope.source] ?? [];
    if (applied.includes(envelope.eventId)) return undefined;
    return { ...doc, bySource: { ...doc.bySource, [envelope.source]: [...applied, envelope.eventId] } };
  },
});

export interface JourneyQueued {
  envelope: Envelope;
  attempt: number;
}

/** Messages handed to the instances in one turn, at once. */
const AT_ONCE = 3;

/**
 * Two instances of the journeys consumer (one name, one journal); each turn picks up to
 * `AT_ONCE` queued messages at random and delivers them concurrently, each through an instance
 * the seed picks. An acknowledged message is sometimes delivered again; a nak'ed one stays.
 */
export function journeysWorker(env: SimEnv, queue: JourneyQueued[]): SimWorker {
  const metrics = messagingMetrics(new Registry());
  const instances = [1, 2].map(
    (n) =>
      new Consumer({
        name: JOURNEYS_CONSUMER,
        journal: env.journal,
        handler: orderJourneys,
        mode: "sequenced",
        clock: env.clock,
        ids: sequentialIds(`g${env.generation}-journeys-${n}`),
        faults: env.faults,
        metrics,
        maxDeliveries: 1_000_000,
        gapTimeoutMs: 60_000,
      }),
  );
  return {
    name: `g${env.generation}-journeys`,
    async runOnce() {
      const picked = new Set<JourneyQueued>();
      for (let i = 0; i < AT_ONCE && picked.size < queue.length; i++) {
        picked.add(queue[Math.floor(env.random.next() * queue.length)] as JourneyQueued);
      }
      const deliveries = [...picked].map((item) => {
        item.attempt++;
        const instance = instances[Math.floor(env.random.next() * instances.length)] as Consumer;
        const keep = env.random.next() < 0.1;
        return instance
          .deliver({
            subject: `${SHOP_SUBJECT_PREFIX}.${item.envelope.source}.${item.envelope.type}`,
            body: encodeEnvelope(item.envelope),
            messageId: item.envelope.eventId,
            attempt: item.attempt,
            maxDeliveries: 1_000_000,
          })
          .then((outcome) => {
            if (outcome.kind !== "nak" && !keep && queue.includes(item)) queue.splice(queue.indexOf(item), 1);
          });
      });
      const settled = await Promise.allSettled(deliveries);
      const failed = settled.find((s) => s.status === "rejected");
      // What a crash between an apply and its release left parked: the gap check releases it.
      const before = (await env.journal.listParked(JOURNEYS_CONSUMER)).length;
      await (instances[0] as Consumer).checkGaps();
      const after = (await env.journal.listParked(JOURNEYS_CONSUMER)).length;
      if (failed) throw (failed as PromiseRejectedResult).reason;
      return picked.size + (before - after);
    },
  };
}

/**
 * Each journey equals the fold of all its order's published events: every event of every source
 * stream, in aggregateVersion order per source, once.
 */
export const journeysFoldEveryEvent: Invariant = {
  name: "journeys-fold-every-event",
  async check(world) {
    const events = (await world.journal.listOutbox({ category: "event" }))
      .map((row) => row.payload as Envelope)
      .filter((envelope) => orderJourneys.key(envelope) !== undefined)
      .sort((a, b) => a.source.localeCompare(b.source) || (a.aggregateVersion ?? 0) - (b.aggregateVersion ?? 0));
    const expected = new Map<string, JourneyDoc>();
    for (const envelope of events) {
      const id = orderJourneys.key(envelope) as string;
      const next = orderJourneys.project(expected.get(id), envelope, undefined as never);
      if (next) expected.set(id, next);
    }
    const problems: string[] = [];
    const stored = await orderJourneys.readAll(world.journal);
    for (const [id, doc] of expected) {
      const found = stored.find((s) => s.id === id)?.view;
      for (const source of new Set([...Object.keys(doc.bySource), ...Object.keys(found?.bySource ?? {})])) {
        const want = doc.bySource[source] ?? [];
        const got = found?.bySource[source] ?? [];
        if (JSON.stringify(want) !== JSON.stringify(got)) {
          const missing = want.filter((e) => !got.includes(e));
          problems.push(
            `journey ${id}, source ${source}: ${got.length} of ${want.length} events${
              missing.length ? `, missing ${missing.join(", ")}` : ", out of order"
            }`,
          );
        }
      }
    }
    for (const { id } of stored) if (!expected.has(id)) problems.push(`journey ${id} has no published event`);
    const parked = await world.journal.listParked(JOURNEYS_CONSUMER);
    problems.push(...parked.map((p) => `journeys: parked ${p.source}@${p.version}`));
    return problems;
  },
};
