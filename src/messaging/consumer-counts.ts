import { SeriesTally, Tally, valuesOf } from "../observability/tally.js";
import type { MessagingMetrics } from "./metrics.js";

/** A consumer's counts since it was built (`Consumer.stats`). */
export interface ConsumerStats {
  applied: number;
  duplicates: number;
  parked: number;
  /** Parked versions applied once their predecessor came (by a delivery, a gap check, a skip or `release`). */
  released: number;
  ignored: number;
  backwards: number;
  deadLetters: number;
  conflicts: number;
  /** Events handed over at commit and handled that way (their outcome is counted above too). */
  handedOver: number;
  /** Durable copies of handed-over events settled from memory, with no read (not counted as duplicates). */
  copiesSettled: number;
  /** Handed-over events whose handling failed, left to their durable copy. */
  handOverFailures: number;
}

/**
 * A consumer's counts, each a tally that moves its series (named beside it), so `Consumer.stats`
 * and the metrics are one count. The consumer's name is bound into each series once.
 */
export type ConsumerCounts = { readonly [K in keyof ConsumerStats]: Tally } & {
  /** `oncely_consumer_messages_total{outcome="applied" | "duplicate" | "parked" | "ignored" | "released"}`. */
  readonly applied: SeriesTally;
  readonly duplicates: SeriesTally;
  readonly parked: SeriesTally;
  readonly ignored: SeriesTally;
  readonly released: SeriesTally;
  /** `oncely_fact_backwards_total` (by fact: `onLabels`). */
  readonly backwards: Tally;
  /** `oncely_dead_letters_total`. */
  readonly deadLetters: SeriesTally;
  /** `oncely_consumer_conflicts_total` (by kind: `onLabels`). */
  readonly conflicts: Tally;
  /** `oncely_consumer_handed_over_total`. */
  readonly handedOver: SeriesTally;
  /** `oncely_consumer_messages_total{outcome="copy" | "hand-over-failed"}`. */
  readonly copiesSettled: SeriesTally;
  readonly handOverFailures: SeriesTally;
};

export function consumerCounts(metrics: MessagingMetrics, consumer: string): ConsumerCounts {
  const handled = (outcome: string) => new SeriesTally(metrics.handled.labels({ consumer, outcome }));
  return {
    applied: handled("applied"),
    duplicates: handled("duplicate"),
    parked: handled("parked"),
    released: handled("released"),
    ignored: handled("ignored"),
    backwards: new Tally(),
    deadLetters: new SeriesTally(metrics.deadLetters.labels({ consumer })),
    conflicts: new Tally(),
    handedOver: new SeriesTally(metrics.consumerHandedOver.labels({ consumer })),
    copiesSettled: handled("copy"),
    handOverFailures: handled("hand-over-failed"),
  };
}

export const consumerStatsOf = (counts: ConsumerCounts): ConsumerStats => valuesOf(counts);
