import type { Counter, LabelValues } from "prom-client";

/**
 * One count of a component and the prom-client series that report it, moved by one call: the
 * component's `stats` getter reads `value`, a dashboard reads the series, and no site can bump one
 * and forget the other (the way two hand-kept counts drifted apart).
 *
 * The count is this instance's own rather than a read of the series: prom-client reads its
 * counters only asynchronously (`get()`), and one registry is shared by every component of a host
 * (and may be by several hosts), whose series then add up.
 *
 * `on` takes the event's labelled child (`counter.labels(...)`, bound once by the caller:
 * prom-client hashes a labels object on every call); `onLabels` resolves the labels in the call,
 * for a path that is not hot or whose label values are not known ahead.
 */
export class Tally {
  #count = 0;

  /** This component's count since it was built. */
  get value(): number {
    return this.#count;
  }

  /** Adds `by` here and to `series`, the labelled child of the event's labels. */
  on(series: Counter.Internal, by = 1): void {
    this.#count += by;
    series.inc(by);
  }

  /** Adds `by` here and to `counter`'s series of `labels`. */
  onLabels<L extends string>(counter: Counter<L>, labels: LabelValues<L>, by = 1): void {
    this.#count += by;
    counter.inc(labels, by);
  }
}

/** A tally of one series: the labels never vary for its component (bound once, at construction). */
export class SeriesTally extends Tally {
  constructor(private readonly series: Counter.Internal) {
    super();
  }

  inc(by = 1): void {
    this.on(this.series, by);
  }
}

/** The values of a component's tallies, as its `stats` getter reports them (a fresh object each read). */
export function valuesOf<K extends string>(tallies: { readonly [P in K]: Tally }): { [P in K]: number } {
  const values = {} as { [P in K]: number };
  for (const key in tallies) values[key] = tallies[key].value;
  return values;
}
