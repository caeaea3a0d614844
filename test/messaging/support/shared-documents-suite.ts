import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../../src/core/clock.js";
import type { Journal } from "../../../src/journal/types.js";
import { Consumer } from "../../../src/messaging/consumer.js";
import type { OrderingMode } from "../../../src/messaging/consumer-options.js";
import { type Envelope, encodeEnvelope } from "../../../src/messaging/envelope.js";
import { messagingMetrics } from "../../../src/messaging/metrics.js";
import { defineProjection } from "../../../src/messaging/projection.js";
import { SimulatedClock } from "../../../src/testing/clock.js";

/**
 * Several producer streams feeding the same documents (renewals of many subscriptions summed per
 * month), consumed with concurrency > 1, by one or two instances of one consumer, in any order,
 * with redeliveries: every document must equal the fold of all its events, in every mode.
 */
interface Renewal {
  stream: number;
  version: number;
  doc: number;
  amount: number;
}

interface Revenue {
  total: number;
  events: string[];
}

const revenue = defineProjection<Revenue>({
  collection: "revenue",
  key: (e) => `month-${(e.payload as { doc: number }).doc}`,
  project: (doc, e) => ({
    total: (doc?.total ?? 0) + (e.payload as { amount: number }).amount,
    events: [...(doc?.events ?? []), e.eventId],
  }),
});

const envelopeOf = (r: Renewal): Envelope => ({
  eventId: `s${r.stream}:${r.version}`,
  type: "SubscriptionRenewed",
  source: "billing",
  aggregateId: `s${r.stream}`,
  aggregateVersion: r.version,
  occurredAt: new Date(Date.UTC(2026, 0, 1)).toISOString(),
  correlationId: `s${r.stream}`,
  causationId: `s${r.stream}:${r.version}`,
  payload: { doc: r.doc, amount: r.amount },
});

/** Streams of 1..4 renewals each, every renewal into one of `docs` documents. */
const world = fc
  .record({
    docs: fc.integer({ min: 1, max: 3 }),
    lengths: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 2, maxLength: 6 }),
  })
  .chain(({ docs, lengths }) =>
    fc.record({
      renewals: fc.tuple(
        ...lengths.flatMap((length, stream) =>
          Array.from({ length }, (_, v) =>
            fc.record({
              stream: fc.constant(stream),
              version: fc.constant(v + 1),
              doc: fc.integer({ min: 0, max: docs - 1 }),
              amount: fc.integer({ min: 1, max: 100 }),
            }),
          ),
        ),
      ),
      // Which deliveries are sent again, and the order and batching of everything.
      copies: fc.array(fc.nat(), { maxLength: 6 }),
      order: fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
      concurrency: fc.integer({ min: 2, max: 6 }),
      instances: fc.integer({ min: 1, max: 2 }),
    }),
  );

function shuffled<T>(items: readonly T[], order: readonly number[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = (order[i % order.length] ?? 0) % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export function sharedDocumentsSuite(
  label: string,
  open: () => Promise<{ journal: Journal; close: () => Promise<void> }>,
  runs = 25,
): void {
  describe(`several source streams into one document: ${label}`, () => {
    for (const mode of ["sequenced", "facts"] as OrderingMode[]) {
      it(`${mode}: each document equals the fold of all its events, whatever the interleaving`, async () => {
        await fc.assert(
          fc.asyncProperty(world, async ({ renewals, copies, order, concurrency, instances }) => {
            const { journal, close } = await open();
            try {
              const consumers = Array.from(
                { length: instances },
                (_, i) =>
                  new Consumer({
                    name: "revenue",
                    journal,
                    handler: revenue,
                    mode,
                    clock: new SimulatedClock(),
                    ids: sequentialIds(`dl${i}`),
                    metrics: messagingMetrics(),
                  }),
              );
              const again = copies.map((c) => renewals[c % renewals.length] as Renewal);
              const deliveries = shuffled([...renewals, ...again], order);
              for (let i = 0; i < deliveries.length; i += concurrency) {
                const batch = deliveries.slice(i, i + concurrency);
                const outcomes = await Promise.all(
                  batch.map((r, k) => {
                    const consumer = consumers[(i + k) % consumers.length] as Consumer;
                    const body = encodeEnvelope(envelopeOf(r));
                    return consumer.deliver({
                      subject: "billing",
                      body,
                      messageId: undefined,
                      attempt: 1,
                      maxDeliveries: 5,
                    });
                  }),
                );
                for (const outcome of outcomes) expect(outcome).toEqual({ kind: "ack" });
              }
              expect(await journal.listDeadLetters()).toEqual([]);
              expect(await journal.listParked("revenue")).toEqual([]);
              const docs = new Set(renewals.map((r) => r.doc));
              for (const doc of docs) {
                const mine = renewals.filter((r) => r.doc === doc);
                const stored = (await journal.getDocument("revenue", `month-${doc}`))?.doc as Revenue | undefined;
                expect(stored?.total).toBe(mine.reduce((sum, r) => sum + r.amount, 0));
                expect([...(stored?.events ?? [])].sort()).toEqual(mine.map((r) => envelopeOf(r).eventId).sort());
              }
            } finally {
              await close();
            }
          }),
          { numRuns: runs },
        );
      });
    }
  });
}
