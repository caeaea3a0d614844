import type { Ownership } from "../../src/core/slices.js";

/**
 * An ownership a test moves by hand, with the protocol of `SliceLeaseManager` (src/ownership): a
 * slice let go stops being owned at once (listeners told), and `release` resolves only once every
 * registered `settleWith` hook has settled it, the point where a lease manager lets the lease go
 * and another worker may take the slice. Gaining tells the listeners after the slice is owned.
 */
export class MovableOwnership implements Ownership {
  private readonly owned: Set<number>;
  private readonly listeners = new Set<() => void>();
  private readonly settlers = new Set<(slice: number) => Promise<void>>();

  constructor(
    readonly sliceCount: number,
    owned: Iterable<number> = [],
  ) {
    this.owned = new Set(owned);
  }

  owns(slice: number): boolean {
    return this.owned.has(slice);
  }

  fence(): number | undefined {
    return undefined;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  settleWith(settle: (slice: number) => Promise<void>): () => void {
    this.settlers.add(settle);
    return () => this.settlers.delete(settle);
  }

  slices(): number[] {
    return [...this.owned].sort((a, b) => a - b);
  }

  gain(slices: Iterable<number>): void {
    for (const slice of slices) this.owned.add(slice);
    for (const listener of this.listeners) listener();
  }

  /** Stop owning `slices` now; resolves once every hook settled them (a lease manager releases then). */
  async release(slices: Iterable<number>): Promise<void> {
    const gone = [...slices].filter((slice) => this.owned.delete(slice));
    for (const listener of this.listeners) listener();
    await Promise.all(gone.flatMap((slice) => [...this.settlers].map((settle) => settle(slice))));
  }
}

/** Move `slices` from one worker to another as leases do: released by the first, then acquired by the second. */
export async function moveSlices(from: MovableOwnership, to: MovableOwnership, slices: number[]): Promise<void> {
  await from.release(slices);
  to.gain(slices);
}
