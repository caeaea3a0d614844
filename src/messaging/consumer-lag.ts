import type { ConsoleQueries } from "../journal/console-queries.js";
import type { Subscription } from "./transport.js";

/** What a consumer's broker can say of its backlog (a `Subscription` answers it). */
export type PendingCount = Pick<Subscription, "pending">;

/**
 * How far behind each consumer is, from one `journal.consumerPositions()` read and one
 * `pending()` per subscription given:
 *
 * - `log`: a reader of the journal's published log (the journal transport): its position against
 *   the log's head. Positions may skip numbers, so `behind` is at most the entries left to read.
 * - `broker`: a subscription's own count (NATS: the durable's pending plus unacknowledged).
 * - `parked`: per source, what a sequenced consumer holds behind a gap: count, the first parked
 *   version against its checkpoint, and since when the oldest has waited.
 */
export interface ConsumerLag {
  log: { consumer: string; position: number; head: number; behind: number; updatedAt: number }[];
  broker: { consumer: string; pending: number | null; error?: string | undefined }[];
  parked: {
    consumer: string;
    source: string;
    checkpoint: number;
    count: number;
    firstParkedVersion: number;
    oldestParkedAt: number;
  }[];
}

export async function consumerLag(
  journal: Pick<ConsoleQueries, "consumerPositions">,
  subscriptions: Readonly<Record<string, PendingCount>> = {},
): Promise<ConsumerLag> {
  const positions = await journal.consumerPositions();
  const head = positions.publishedHead;
  const broker = await Promise.all(
    Object.entries(subscriptions)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(async ([consumer, subscription]) => {
        try {
          return { consumer, pending: await subscription.pending() };
        } catch (error) {
          // A broker that cannot answer now: said on the page and left out of the metric, never a 0.
          return { consumer, pending: null, error: error instanceof Error ? error.message : String(error) };
        }
      }),
  );
  return {
    log: positions.readers.map((r) => ({ ...r, head, behind: Math.max(0, head - r.position) })),
    broker,
    parked: positions.parked,
  };
}
