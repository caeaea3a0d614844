import type { Registry } from "prom-client";
import { OWNERSHIP_DEFAULTS } from "../base/defaults.js";
import { InvalidInputError, isRetryable } from "../base/errors.js";
import { type Clock, type Random, SLEEP_CANCELLED } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Logger } from "../core/logger.js";
import { DEFAULT_SLICE_COUNT, type Ownership, requireSliceCount } from "../core/slices.js";
import type { Journal } from "../journal/types.js";
import { type OwnershipMetrics, ownershipMetrics } from "../observability/ownership-metrics.js";
import { type SliceLease, SliceLeaseStore } from "./lease-store.js";
import { planRebalance } from "./rebalance.js";

export interface SliceLeaseOptions {
  journal: Journal;
  /** This worker's id: unique among the workers sharing the journal, stable for the process's life. */
  workerId: string;
  /** Slices of the system (a power of two; default the journal's `sliceCount`); every worker must use the same number. */
  sliceCount?: number | undefined;
  /** How long a lease holds without renewal (ms, default 6,000): a dead worker's slices move after it. */
  leaseMs?: number | undefined;
  /** Time between rounds (ms, default a third of `leaseMs`): a lease is renewed twice before it lapses. */
  roundMs?: number | undefined;
  /** Acquisitions and releases together per round, at most (default 4). */
  maxMovesPerRound?: number | undefined;
  clock?: Clock | undefined;
  /** Orders the slices a round takes or lets go, so two workers seldom reach for the same one. */
  random?: Random | undefined;
  logger?: Logger | undefined;
  /** Where `oncely_slice_moves_total` and `oncely_slices_owned` go. */
  registry?: Registry | undefined;
  /**
   * This worker's peer endpoint (where other workers send the commands of its slices), published
   * with its heartbeat; read at every round, so a port known only once listening is fine.
   */
  endpoint?: (() => string | undefined) | undefined;
}

interface Held {
  token: number;
  /** The lease holds while the clock is before this (the time its renewal was sent, plus leaseMs). */
  until: number;
  /** Being let go: not owned any more, its lease kept until its commands in flight settle. */
  releasing: boolean;
}

/**
 * Slice ownership by leases in the journal (see `SliceLeaseStore`): an `Ownership` that a runtime,
 * consumers and a router ask. Each round (every `roundMs`) it renews its leases and its heartbeat in
 * one commit, reads the leases and the live workers, and moves toward its fair share by
 * `planRebalance` (at most `maxMovesPerRound` moves).
 *
 * - A slice is owned while its lease holds by this worker's clock; a lease that lapsed before its
 *   renewal (the process stalled, the database was out of reach) is dropped as lost at the next
 *   round, even if nobody took it: others may have.
 * - A slice is let go only after the commands in flight for it settled (`settleWith`): it stops
 *   being owned at once (new commands are refused), its lease is renewed meanwhile, then released.
 * - A commit refused by the fence (`fencedOut`) drops the slice at once.
 *
 * Failure window: between another worker's takeover and this worker's next round (or the lapse of
 * its lease by its own clock), `owns` may still answer true. A command decided then is refused by
 * the fence at commit; nothing of it is written.
 *
 * @example
 * const ownership = new SliceLeaseManager({ journal, workerId: "worker-1" });
 * const runtime = new Runtime({ journal, actors, ownership });
 * await ownership.start();
 * // ...
 * await ownership.stop(); // lets every slice go, so the others take them at once
 */
export class SliceLeaseManager implements Ownership {
  readonly sliceCount: number;
  readonly workerId: string;
  readonly leaseMs: number;
  readonly roundMs: number;
  readonly maxMovesPerRound: number;
  private readonly store: SliceLeaseStore;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly logger: Logger;
  private readonly metrics: OwnershipMetrics;
  private readonly held = new Map<number, Held>();
  private readonly listeners = new Set<() => void>();
  private readonly settlers = new Set<(slice: number) => Promise<void>>();
  private readonly releases = new Set<Promise<void>>();
  /** Lease commits of this worker, one at a time: a renewal never races a release of the same slice. */
  private exclusive: Promise<unknown> = Promise.resolve();
  private rounding: Promise<number> | undefined;
  private loop: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private readonly endpoint: () => string | undefined;
  /** Every slice's lease and the live workers' endpoints, as the last round read them. */
  private seen: { leases: Map<number, SliceLease>; endpoints: Map<string, string | undefined> } = {
    leases: new Map(),
    endpoints: new Map(),
  };

  constructor(options: SliceLeaseOptions) {
    this.endpoint = options.endpoint ?? (() => undefined);
    // The journal's count unless told: leases over another count than the journal's rows would claim other slices.
    this.sliceCount = requireSliceCount(options.sliceCount ?? options.journal.sliceCount ?? DEFAULT_SLICE_COUNT);
    if (!options.workerId) throw new InvalidInputError("a slice lease manager needs a workerId");
    this.workerId = options.workerId;
    this.leaseMs = positive("leaseMs", options.leaseMs ?? OWNERSHIP_DEFAULTS.leaseMs);
    this.roundMs = positive("roundMs", options.roundMs ?? Math.floor(this.leaseMs / 3));
    if (this.roundMs >= this.leaseMs) {
      throw new InvalidInputError(`roundMs (${this.roundMs}) must be shorter than leaseMs (${this.leaseMs})`);
    }
    this.maxMovesPerRound = positive(
      "maxMovesPerRound",
      options.maxMovesPerRound ?? OWNERSHIP_DEFAULTS.maxMovesPerRound,
    );
    this.store = new SliceLeaseStore(options.journal);
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.random = env.random;
    this.logger = env.logger;
    this.metrics = ownershipMetrics(env.registry);
  }

  owns(slice: number): boolean {
    const held = this.held.get(slice);
    return held !== undefined && !held.releasing && this.clock.now() < held.until;
  }

  fence(slice: number): number | undefined {
    return this.held.get(slice)?.token;
  }

  /** The slices owned now, ascending. */
  /**
   * The peer endpoint of the worker holding `slice`'s lease as the last round saw it (at most
   * `roundMs` old), or undefined: owned here, free, lapsed, or held by a worker with no endpoint.
   * A stale answer costs a refused peer request and the journal path, never a second writer: the
   * peer checks its own ownership, and the fence checks every commit.
   */
  peerEndpointOf(slice: number): string | undefined {
    const lease = this.seen.leases.get(slice);
    if (!lease || lease.owner === null || lease.owner === this.workerId || lease.until <= this.clock.now()) {
      return undefined;
    }
    return this.seen.endpoints.get(lease.owner);
  }

  ownedSlices(): number[] {
    return [...this.held.keys()].filter((slice) => this.owns(slice)).sort((a, b) => a - b);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  settleWith(settle: (slice: number) => Promise<void>): () => void {
    this.settlers.add(settle);
    return () => this.settlers.delete(settle);
  }

  fencedOut(slice: number, token: number): void {
    if (this.held.get(slice)?.token !== token) return; // already dropped, or taken again since
    this.drop([slice], "a commit was fenced out: another worker holds the slice");
  }

  /**
   * One round: renew, read, rebalance. Resolves with the number of moves it made (releases are
   * started, and finish once their slice's commands settle). A round already running is joined.
   */
  round(): Promise<number> {
    this.rounding ??= this.runRound().finally(() => {
      this.rounding = undefined;
    });
    return this.rounding;
  }

  /**
   * Announce this worker and take its share in back-to-back rounds (each bounded by
   * `maxMovesPerRound`), then keep rounds going every `roundMs` until `stop`.
   */
  async start(): Promise<void> {
    if (this.loop) return;
    this.loop = Promise.resolve();
    // A round that fails for a passing reason (a connection cut while workers start, a restart of the
    // database) is tried again after a pause, logged at warn and counted: a worker must not die at
    // start because its journal blinked. Anything else (a bad option, a bug) still fails the start.
    let failures = 0;
    for (let rounds = 0; rounds < this.sliceCount && !this.stopping.signal.aborted; rounds++) {
      let moved: number;
      try {
        moved = await this.round();
      } catch (error) {
        if (!isRetryable(error)) throw error;
        failures++;
        this.metrics.failedRounds.inc();
        const pauseMs = Math.min(this.roundMs, 50 * 2 ** Math.min(failures, 6));
        this.logger.warn(
          { err: error, workerId: this.workerId, failures, pauseMs },
          "slice lease round failed at start; trying again",
        );
        await this.clock.sleep(pauseMs, this.stopping.signal).catch(() => {});
        rounds--;
        continue;
      }
      if (moved === 0) break;
    }
    this.loop = this.keepRounding();
  }

  /** Resolves once every release started so far has finished (its commands settled, its lease let go). */
  async releasesSettled(): Promise<void> {
    while (this.releases.size > 0) await Promise.all([...this.releases]);
  }

  /** Stop the rounds, let every slice go once its commands settle, and withdraw the heartbeat. */
  async stop(): Promise<void> {
    this.stopping.abort(SLEEP_CANCELLED);
    await this.loop;
    await this.rounding?.catch(() => {});
    for (const [slice, held] of this.held) if (!held.releasing) this.release(slice);
    await Promise.all([...this.releases]);
    await this.serially(() => this.store.leave(this.workerId, this.clock.now()));
    this.metrics.owned.set(0);
  }

  private async keepRounding(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        await this.clock.sleep(this.roundMs, this.stopping.signal);
      } catch {
        return; // stopped
      }
      await this.round().catch((error) => this.failedRound(error));
    }
  }

  private failedRound(error: unknown): void {
    this.metrics.failedRounds.inc();
    this.logger.warn({ err: error, workerId: this.workerId }, "slice lease round failed; retrying next round");
  }

  private async runRound(): Promise<number> {
    const start = this.clock.now();
    // A lease that lapsed before this renewal may have been taken: whatever the journal says, the
    // slice's cached actors are suspect, so it is dropped (and may be taken again below).
    const lapsed = [...this.held].filter(([, held]) => held.until <= start && !held.releasing).map(([s]) => s);
    if (lapsed.length > 0) this.drop(lapsed, "its lease lapsed before it was renewed");
    const until = start + this.leaseMs;
    const lost = await this.serially(async () => {
      const tokens = new Map([...this.held].map(([slice, held]) => [slice, held.token]));
      const refused = await this.store.renew(tokens, this.workerId, until, start, this.endpoint());
      for (const [slice, held] of this.held) if (!refused.includes(slice)) held.until = until;
      return refused;
    });
    if (lost.length > 0) this.drop(lost, "another worker took it before this worker renewed its lease");

    const now = this.clock.now();
    const [leases, workers] = await Promise.all([this.store.leases(), this.store.workers(now)]);
    this.seen = { leases, endpoints: workers };
    const live = [...workers.keys()];
    const owned = new Set([...this.held].filter(([, held]) => !held.releasing).map(([slice]) => slice));
    const plan = planRebalance({
      sliceCount: this.sliceCount,
      liveWorkers: Math.max(1, live.length + (live.includes(this.workerId) ? 0 : 1)),
      held: owned,
      leases,
      now,
      maxMoves: this.maxMovesPerRound,
      random: this.random,
    });
    for (const slice of plan.release) this.release(slice);
    let acquired = 0;
    for (const slice of plan.acquire) {
      const at = this.clock.now();
      const token = await this.serially(() =>
        this.store.acquire(slice, leases.get(slice), this.workerId, at + this.leaseMs, at),
      );
      if (token === undefined) continue; // another worker took it first
      this.held.set(slice, { token, until: at + this.leaseMs, releasing: false });
      this.metrics.moves.inc({ kind: "acquired" });
      acquired++;
    }
    if (acquired > 0 || plan.release.length > 0) this.changed();
    return acquired + plan.release.length;
  }

  /** Stop owning `slice` now; let its lease go once every runtime's commands for it settled. */
  private release(slice: number): void {
    const held = this.held.get(slice);
    if (!held || held.releasing) return;
    held.releasing = true;
    const done = (async () => {
      await Promise.all([...this.settlers].map((settle) => settle(slice)));
      await this.serially(async () => {
        if (this.held.get(slice) !== held) return; // lost meanwhile
        this.held.delete(slice);
        const released = await this.store.release(slice, held.token, this.clock.now());
        this.metrics.moves.inc({ kind: released ? "released" : "lost" });
      });
    })()
      .catch((error) =>
        // The lease lapses by itself: the slice is merely slow to move, never held twice.
        this.logger.warn({ err: error, slice, workerId: this.workerId }, "releasing a slice failed; its lease lapses"),
      )
      .finally(() => {
        this.releases.delete(done);
        this.metrics.owned.set(this.ownedCount());
      });
    this.releases.add(done);
  }

  private drop(slices: number[], why: string): void {
    for (const slice of slices) {
      if (!this.held.delete(slice)) continue;
      this.metrics.moves.inc({ kind: "lost" });
      this.logger.warn({ slice, workerId: this.workerId }, `lost slice ${slice}: ${why}`);
    }
    this.changed();
  }

  private changed(): void {
    this.metrics.owned.set(this.ownedCount());
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (error) {
        this.logger.warn({ err: error }, "a slice ownership listener threw");
      }
    }
  }

  private ownedCount(): number {
    let count = 0;
    for (const held of this.held.values()) if (!held.releasing) count++;
    return count;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.exclusive.then(work, work);
    this.exclusive = run.catch(() => {});
    return run;
  }
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new InvalidInputError(`${name} must be a positive integer, got ${value}`);
  return value;
}
