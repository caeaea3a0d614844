import type { Counter, LabelValues } from "prom-client";

/** The keys of `S` whose values are numbers: the counts of a component's `stats`. */
type CountOf<S> = { [K in keyof S]: S[K] extends number ? K : never }[keyof S];

/**
 * Counts one thing once: adds `n` to a component's `stats[stat]` and to the prom-client series of
 * `labels`, in one call, so the number a test reads in `stats` and the one a dashboard reads
 * cannot drift apart (a site that bumped one and forgot the other was the way they did).
 *
 * The stat stays this instance's own total rather than a read of the counter: prom-client reads
 * its counters only asynchronously, and one registry is shared by every component of a host (and
 * may be by several hosts), whose series then add up.
 */
export function tally<S extends object>(stats: S, stat: CountOf<S>, series: Counter.Internal, n?: number): void;
export function tally<S extends object, L extends string>(
  stats: S,
  stat: CountOf<S>,
  counter: Counter<L>,
  labels: LabelValues<L>,
  n?: number,
): void;
export function tally<S extends object, L extends string>(
  stats: S,
  stat: CountOf<S>,
  counter: Counter<L> | Counter.Internal,
  labels?: LabelValues<L> | number,
  n?: number,
): void {
  const by = (typeof labels === "number" ? labels : n) ?? 1;
  (stats[stat] as number) += by;
  if (typeof labels === "object") (counter as Counter<L>).inc(labels, by);
  else counter.inc(by);
}
