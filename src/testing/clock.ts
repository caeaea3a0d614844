import type { Clock } from "../core/clock.js";

interface Sleeper {
  at: number;
  order: number;
  resolve: () => void;
}

/**
 * A clock that moves only when told, and never backwards. `sleep` resolves when the clock is
 * advanced past its deadline, in deadline order, so timers fire deterministically.
 */
export class SimulatedClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];
  private order = 0;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sleeper: Sleeper = { at: this.current + Math.max(0, ms), order: this.order++, resolve };
      signal?.addEventListener(
        "abort",
        () => {
          this.sleepers = this.sleepers.filter((s) => s !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
      this.sleepers.push(sleeper);
    });
  }

  /** Move forward by `ms`, waking every sleeper whose deadline has come, earliest first. */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError(`SimulatedClock cannot go backwards (advance by ${ms} ms)`);
    this.set(this.current + ms);
  }

  /** Jump to an absolute time; refuses to go backwards. */
  set(time: number): void {
    if (time < this.current) {
      throw new RangeError(`SimulatedClock cannot go backwards (from ${this.current} to ${time})`);
    }
    this.current = time;
    const due = this.sleepers.filter((s) => s.at <= time).sort((a, b) => a.at - b.at || a.order - b.order);
    this.sleepers = this.sleepers.filter((s) => s.at > time);
    for (const sleeper of due) sleeper.resolve();
  }

  /** Deadline of the earliest sleeper, if any (a simulator uses it to jump to the next timer). */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const s of this.sleepers) if (next === undefined || s.at < next) next = s.at;
    return next;
  }
}
