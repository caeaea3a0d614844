import type { Ownership } from "./slices.js";

/**
 * A runtime's side of slice ownership: counts the commands in flight per slice, so an ownership
 * that lets a slice go can wait until they settle (`Ownership.settleWith`), and tells the runtime
 * which slices changed hands on every `onChange`, so it drops their cached actors (a slice lost may
 * be written by another worker from now on; a slice regained may have been written meanwhile).
 */
export class SliceGate {
  private readonly inFlight = new Map<number, number>();
  private readonly waiters = new Map<number, (() => void)[]>();
  private owned: Set<number>;
  private readonly unsubscribe: (() => void)[] = [];
  /** Counting is needed only when the ownership waits for it (one that never lets a slice go does not). */
  private readonly counting: boolean;

  constructor(
    private readonly ownership: Ownership,
    evict: (slices: ReadonlySet<number>) => void,
  ) {
    this.owned = this.ownedNow();
    this.unsubscribe.push(
      ownership.onChange(() => {
        const now = this.ownedNow();
        const changed = new Set<number>();
        for (const slice of now) if (!this.owned.has(slice)) changed.add(slice);
        for (const slice of this.owned) if (!now.has(slice)) changed.add(slice);
        this.owned = now;
        if (changed.size > 0) evict(changed);
      }),
    );
    this.counting = ownership.settleWith !== undefined;
    if (ownership.settleWith) this.unsubscribe.push(ownership.settleWith((slice) => this.settled(slice)));
  }

  /** Run a command of `slice`, counted in flight until it settles. */
  track<T>(slice: number, work: () => Promise<T>): Promise<T> {
    if (!this.counting) return work();
    this.inFlight.set(slice, (this.inFlight.get(slice) ?? 0) + 1);
    const done = () => {
      const left = (this.inFlight.get(slice) ?? 1) - 1;
      if (left > 0) {
        this.inFlight.set(slice, left);
        return;
      }
      this.inFlight.delete(slice);
      for (const wake of this.waiters.get(slice) ?? []) wake();
      this.waiters.delete(slice);
    };
    return work().finally(done);
  }

  /** Resolves once no command of `slice` is in flight (at once when none is). */
  settled(slice: number): Promise<void> {
    if (!this.inFlight.has(slice)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(slice, [...(this.waiters.get(slice) ?? []), resolve]));
  }

  close(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.unsubscribe.length = 0;
  }

  private ownedNow(): Set<number> {
    const owned = new Set<number>();
    for (let slice = 0; slice < this.ownership.sliceCount; slice++) if (this.ownership.owns(slice)) owned.add(slice);
    return owned;
  }
}
