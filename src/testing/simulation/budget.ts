/**
 * The wall-clock safety net of one simulated run. The simulated clock stays injected and decides
 * everything the system sees; this only cuts a run whose code under test never finishes a step
 * (an `await` that never resolves, or work that grows without end), so a bug shows as a reported
 * stall instead of a hung test.
 */
export class Stall extends Error {
  constructor(readonly where: string) {
    super(`stalled: ${where}`);
    this.name = "Stall";
  }
}

export class Budget {
  private readonly deadline: number;
  private cut: string | undefined;

  constructor(
    readonly ms: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(ms > 0)) throw new Error(`a wall-clock budget must be > 0 ms, got ${ms}`);
    this.deadline = now() + ms;
  }

  /** Why the run was cut, once it was. */
  get stalled(): string | undefined {
    return this.cut;
  }

  /**
   * Throws once the budget is spent. Called synchronously on every journal call, so even a loop
   * that only awaits resolved promises (and would starve a timer) is cut at its next journal call.
   */
  check(where: string): void {
    if (this.cut === undefined && this.now() > this.deadline) this.cut = where;
    if (this.cut !== undefined) throw new Stall(this.cut);
  }

  /** `work`, or a Stall when the budget runs out first (the abandoned promise is left behind). */
  async race<T>(work: Promise<T>, where: string): Promise<T> {
    this.check(where);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expiry = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          this.cut ??= where;
          reject(new Stall(this.cut));
        },
        Math.max(0, this.deadline - this.now()),
      );
    });
    try {
      return await Promise.race([work, expiry]);
    } finally {
      clearTimeout(timer);
    }
  }
}
