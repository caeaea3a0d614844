import type { Envelope, Subscription } from "oncely";
import { Consumer, defineProjection, JournalTransport, messagingMetrics } from "oncely";
import { PUBLISHED_READER_SOURCE } from "oncely/advanced";
import type { Invariant, SimEnv, SimWorker } from "oncely/testing";
import { sequentialIds } from "oncely/testing";
import { Registry } from "prom-client";
import { isIntegrationEventType, SHOP_SUBJECT_PREFIX } from "../integration/events.js";
import { orderIdOf } from "../integration/order-id.js";

/**
 * The durable embedded transport under simulation: what the relay publishes is also appended to
 * the journal's published log, and one consumer reads it through a `JournalTransport` with one
 * handler slot. Its handler holds every call until the worker's next turn, so entries read ahead
 * wait for the slot; at a turn the seed picks, the worker releases the call in hand and stops the
 * subscription gracefully (the next turn subscribes again from the stored position). A reader
 * that stored its position past entries never handed to the handler loses them: the view below
 * then misses events.
 */
export const LOG_CONSUMER = "sim-log-views";

interface LogViewDoc {
  orderId: string;
  eventIds: string[];
}

export const logViews = defineProjection<LogViewDoc>({
  collection: "sim-log-views",
  key: (envelope) => (isIntegrationEventType(envelope.type) ? orderIdOf(envelope) : undefined),
  project(current, envelope) {
    const doc = current ?? { orderId: envelope.aggregateId, eventIds: [] };
    if (doc.eventIds.includes(envelope.eventId)) return undefined;
    return { ...doc, eventIds: [...doc.eventIds, envelope.eventId].sort() };
  },
});

/** Stops at this share of its turns. */
const STOP_RATE = 0.3;

export function journalLogWorker(env: SimEnv, feed: Envelope[]): SimWorker {
  const transport = new JournalTransport({
    journal: env.journal,
    clock: env.clock,
    random: env.random,
    pollMs: 1_000,
    batchSize: 8,
  });
  const consumer = new Consumer({
    name: LOG_CONSUMER,
    journal: env.journal,
    handler: logViews,
    clock: env.clock,
    ids: sequentialIds(`g${env.generation}-log`),
    faults: env.faults,
    metrics: messagingMetrics(new Registry()),
    maxDeliveries: 1_000_000,
  });
  let subscription: Subscription | undefined;
  let held = 0;
  let open: () => void = () => {};
  let gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const release = () => {
    open();
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
  };
  return {
    name: `g${env.generation}-journal-log`,
    async runOnce() {
      let work = 0;
      while (feed.length > 0) {
        const envelope = feed[0] as Envelope;
        await transport.publish(envelope, `${SHOP_SUBJECT_PREFIX}.${envelope.source}.${envelope.type}`);
        feed.shift();
        work++;
      }
      if (held > 0) work++;
      // The call in hand goes on; those waiting for the slot wait for the next turn.
      release();
      if (subscription && env.random.next() < STOP_RATE) {
        const stopping = subscription;
        subscription = undefined;
        env.count("journal-log:stop");
        await stopping.stop();
        return work + 1;
      }
      if (!subscription) {
        subscription = await transport.subscribe(
          LOG_CONSUMER,
          { subjects: [`${SHOP_SUBJECT_PREFIX}.>`], concurrency: 1, maxDeliveries: 1_000_000 },
          async (delivery) => {
            const until = gate;
            held++;
            await until;
            held--;
            return consumer.deliver(delivery);
          },
        );
        work++;
      }
      const head = (await env.journal.readPublished(0)).at(-1)?.position ?? 0;
      const at = await env.journal.getCheckpoint(LOG_CONSUMER, PUBLISHED_READER_SOURCE);
      return work + (at < head ? 1 : 0);
    },
  };
}

/** The log's view holds every published event of its order, once: nothing was skipped by a stop. */
export const logViewsHoldEveryEvent: Invariant = {
  name: "journal-log-delivers-every-event",
  async check(world) {
    const expected = new Map<string, Set<string>>();
    for (const row of await world.journal.listOutbox({ category: "event" })) {
      const envelope = row.payload as Envelope;
      const id = logViews.key(envelope);
      if (id !== undefined) expected.set(id, (expected.get(id) ?? new Set()).add(envelope.eventId));
    }
    const problems: string[] = [];
    for (const [id, events] of expected) {
      const got = new Set((await logViews.read(world.journal, id))?.eventIds ?? []);
      const missing = [...events].filter((e) => !got.has(e));
      if (missing.length > 0) problems.push(`log view ${id} misses ${missing.join(", ")}`);
    }
    return problems;
  },
};
