import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import { sliceOf } from "../../src/core/slices.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { parseEnvelope } from "../../src/messaging/envelope.js";
import type { Delivery, DeliveryOutcome } from "../../src/messaging/transport.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { MovableOwnership } from "../support/movable-ownership.js";
import { LIFECYCLE, orderEvent } from "./support/orders.js";

const SLICES = 8;
const ORDERS = Array.from({ length: 10 }, (_, i) => `q${i}`);

type Step =
  /** The next version of some orders is published. */
  | { kind: "publish"; orders: number[] }
  /** Some slices move from one reader's worker to the other's (released, then acquired). */
  | { kind: "move"; slices: number[]; to: 0 | 1 }
  /** Give the readers a few turns. */
  | { kind: "turn" };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("publish" as const),
      orders: fc.uniqueArray(fc.nat(ORDERS.length - 1), { minLength: 1, maxLength: ORDERS.length }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("move" as const),
      slices: fc.uniqueArray(fc.nat(SLICES - 1), { minLength: 1, maxLength: SLICES }),
      to: fc.constantFrom(0 as const, 1 as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("turn" as const) }) },
);

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("journal transport partitioned by slice, under random ownership moves (memory journal)", () => {
  it("delivers every event, each order's events first seen in version order, only to an owner of its slice", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), fc.nat(SLICES), async (steps, split) => {
        const journal = new MemoryJournal({ sliceCount: SLICES });
        const all = Array.from({ length: SLICES }, (_, i) => i);
        const owners = [
          new MovableOwnership(
            SLICES,
            all.filter((s) => s < split),
          ),
          new MovableOwnership(
            SLICES,
            all.filter((s) => s >= split),
          ),
        ] as const;
        const transports = owners.map(
          () => new JournalTransport({ journal, pollMs: 5, batchSize: 4, logger: silentLogger }),
        );
        /** Every delivery, in the order the handlers were called, with the reader that got it. */
        const deliveries: { order: string; version: number; reader: number; owned: boolean }[] = [];
        for (const [reader, transport] of transports.entries()) {
          const ownership = owners[reader as 0 | 1];
          await transport.subscribe(
            "c",
            { subjects: ["shop.>"], ownership, concurrency: 1 },
            async (d: Delivery): Promise<DeliveryOutcome> => {
              const envelope = parseEnvelope(JSON.parse(d.body));
              deliveries.push({
                order: envelope.aggregateId,
                version: envelope.aggregateVersion ?? 0,
                reader,
                owned: ownership.owns(sliceOf(envelope.aggregateId, SLICES)),
              });
              // Take a turn or two, so that moves find entries in flight.
              await turns(deliveries.length % 3);
              return { kind: "ack" };
            },
          );
        }
        const published = new Map<string, number>();
        for (const s of steps) {
          if (s.kind === "publish") {
            for (const i of s.orders) {
              const order = ORDERS[i] as string;
              const version = (published.get(order) ?? 0) + 1;
              if (version > LIFECYCLE.length) continue;
              published.set(order, version);
              await transports[0]?.publish(orderEvent(order, version), `shop.orders.${LIFECYCLE[version - 1]}`);
            }
          } else if (s.kind === "move") {
            const [from, to] = s.to === 1 ? [owners[0], owners[1]] : [owners[1], owners[0]];
            const moving = s.slices.filter((slice) => from.owns(slice));
            await from.release(moving);
            to.gain(moving);
          } else {
            await turns(3);
          }
        }
        await Promise.all(transports.map((t) => t.idle()));
        for (const transport of transports) await transport.close();
        // Every delivery went to a reader whose worker owned the event's slice when it was handled.
        expect(deliveries.filter((d) => !d.owned)).toEqual([]);
        for (const order of ORDERS) {
          const seen = deliveries.filter((d) => d.order === order).map((d) => d.version);
          const first = seen.filter((v, i) => seen.indexOf(v) === i);
          // Nothing lost, nothing out of order: first deliveries are 1, 2, ... up to the last published.
          expect(first, order).toEqual(Array.from({ length: published.get(order) ?? 0 }, (_, i) => i + 1));
        }
      }),
      { numRuns: 40 },
    );
  });
});
