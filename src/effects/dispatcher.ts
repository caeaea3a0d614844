import { setMaxListeners } from "node:events";
import type { Registry } from "prom-client";
import { DISPATCHER_DEFAULTS } from "../base/defaults.js";
import { InvalidInputError } from "../base/errors.js";
import { type Clock, type Random, SLEEP_CANCELLED } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Faults } from "../core/faults.js";
import type { HandOver } from "../core/hand-over.js";
import type { Logger } from "../core/logger.js";
import type { Ownership } from "../core/slices.js";
import { outboxSlice } from "../journal/outbox-slice.js";
import { ownedSlices, requireSameSliceCount } from "../journal/owned-slices.js";
import type { JournalAdmin, NewOutboxRow, OutboxCategory, OutboxRow, OutboxStore } from "../journal/types.js";
import { outboxStepSpan } from "../observability/outbox-spans.js";
import { SeriesTally } from "../observability/tally.js";
import { backoffDelay } from "./backoff.js";
import {
  type CommandSink,
  type DispatcherCounts,
  type DispatcherStats,
  type MessageRetryPolicy,
  newCounts,
  type StepContext,
  statsOf,
} from "./context.js";
import { effectStep, firstAttemptRecorded, recordedAttemptStep } from "./effect-step.js";
import { messageStep } from "./message-step.js";
import { effectMetrics } from "./metrics.js";
import { resolvePolicy } from "./policy.js";
import { TIMER_KIND, timerStep } from "./timer.js";
import type { EffectHandler, EffectPolicy } from "./types.js";

/** What a dispatcher uses of the journal: it claims rows, updates the ones it holds, and wakes on new ones. */
export type DispatcherJournal = Pick<OutboxStore, "claimOutbox" | "updateOutbox" | "onOutbox"> &
  Pick<JournalAdmin, "sliceCount">;

export interface DispatcherOptions {
  journal: DispatcherJournal;
  /** Receives outcome commands and delivers messages; a `Runtime`. */
  runtime: CommandSink;
  // biome-ignore lint/suspicious/noExplicitAny: handlers of every input and result type
  handlers?: EffectHandler<any, any>[];
  /** Lease owner id; unique per dispatcher (process + instance). */
  owner: string;
  /** Outbox categories served (default effect and message). */
  categories?: Exclude<OutboxCategory, "event">[];
  /** Rows claimed per `runOnce` (default 32). */
  batchSize?: number;
  /** Rows of one batch processed at the same time (default 8). */
  concurrency?: number;
  /** Fallback poll when no wake-up arrives (default 1000 ms); also the granularity of durable timers. */
  pollIntervalMs?: number;
  /** Policy for every kind; a handler's own `policy` overrides it per kind. */
  defaultPolicy?: Partial<EffectPolicy>;
  messageRetry?: Partial<MessageRetryPolicy>;
  clock?: Clock;
  /** For backoff jitter. */
  random?: Random;
  faults?: Faults;
  logger?: Logger;
  /** Where the dispatcher's metrics go (see `effectMetrics`); a private registry by default. */
  registry?: Registry;
  /**
   * What this worker owns: claims take only rows of owned slices (see `outboxSlice`), rows of other
   * slices are not taken at commit, and a change of ownership wakes the dispatcher to claim again.
   * Absent (or owning every slice): every row, with no slice filter at all.
   */
  ownership?: Ownership;
}

const DEFAULT_MESSAGE_RETRY: MessageRetryPolicy = {
  maxAttempts: DISPATCHER_DEFAULTS.messageMaxAttempts,
  backoff: { ...DISPATCHER_DEFAULTS.messageBackoff },
};

/**
 * Delivers outbox rows: effects to their handlers, messages to their receivers, outcomes back
 * to the owning actors as commands (whose commit marks the row done).
 *
 * Rows are claimed with a lease of the longest `leaseMs` among the served kinds; a dispatcher
 * that dies leaves its rows leased until then, and any dispatcher takes them over afterwards,
 * with the same keys. Recovery never calls a handler: the dispatcher does, from the outbox alone.
 *
 * @example
 * const dispatcher = new Dispatcher({ journal, runtime, owner: "worker-1", handlers: [payment] });
 * dispatcher.start();            // real use: wakes on new rows, polls as a fallback
 * await dispatcher.runOnce();    // tests and simulators: one batch, fully processed
 */
export class Dispatcher implements HandOver {
  readonly owner: string;
  private readonly counts: DispatcherCounts;
  private readonly journal: DispatcherJournal;
  private readonly categories: OutboxCategory[];
  private readonly batchSize: number;
  /** Rows processed at the same time, claimed and handed over together (the `concurrency` option). */
  readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly ctx: StepContext;
  /** The lease taken on every claimed row (ms). */
  readonly leaseMs: number;
  private readonly policies = new Map<string, EffectPolicy>();
  private readonly defaultPolicy: EffectPolicy;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly ownership: Ownership | undefined;
  private woken = false;
  private wakeIdle: (() => void) | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private claims = 0;
  private readonly runtime: DispatcherOptions["runtime"];
  private handingOver = false;
  /** Rows being processed, claimed or handed over: never more than `concurrency`. */
  private busy = 0;
  /** Rows waiting for a slot, in arrival order; each is handed a slot as one frees. */
  private readonly waiting: (() => void)[] = [];

  constructor(options: DispatcherOptions) {
    // Every running handler call listens on the stop signal; many in flight at once is normal.
    setMaxListeners(0, this.stopping.signal);
    if (!options.owner) throw new InvalidInputError("Dispatcher needs an owner id (the lease owner)");
    this.owner = options.owner;
    this.journal = options.journal;
    this.runtime = options.runtime;
    requireSameSliceCount(`Dispatcher ${options.owner}`, options.ownership, options.journal);
    this.ownership = options.ownership;
    this.categories = options.categories ?? ["effect", "message"];
    this.batchSize = positive("batchSize", options.batchSize ?? DISPATCHER_DEFAULTS.batchSize);
    this.concurrency = positive("concurrency", options.concurrency ?? DISPATCHER_DEFAULTS.concurrency);
    this.pollIntervalMs = positive("pollIntervalMs", options.pollIntervalMs ?? DISPATCHER_DEFAULTS.pollIntervalMs);
    const env = resolveEnvironment(options);
    this.clock = env.clock;
    this.logger = env.logger;
    this.defaultPolicy = resolvePolicy(options.defaultPolicy);
    const handlers = new Map<string, EffectHandler>();
    for (const handler of options.handlers ?? []) {
      if (typeof handler.run !== "function") {
        // A declared effect without its implementation (`defineEffect({ kind })` not yet `.implement`ed).
        throw new InvalidInputError(
          `the handler for effect kind "${handler.kind}" has no run: pass an effect defined with run, or effect.implement({ run })`,
        );
      }
      // A renamed kind: rows requested under a former name are this handler's too (see `formerKinds`).
      for (const kind of [handler.kind, ...(handler.formerKinds ?? [])]) {
        if (handlers.has(kind)) throw new InvalidInputError(`two handlers for effect kind "${kind}"`);
        handlers.set(kind, handler);
        this.policies.set(kind, resolvePolicy(options.defaultPolicy, handler.policy));
      }
    }
    const messageRetry = {
      ...DEFAULT_MESSAGE_RETRY,
      ...options.messageRetry,
      backoff: { ...DEFAULT_MESSAGE_RETRY.backoff, ...options.messageRetry?.backoff },
    };
    // One lease for a whole claim: the longest any served kind needs, so no call outlives its lease.
    // (Rows of kinds without a handler are only handed back, which needs no long lease.)
    this.leaseMs =
      this.policies.size > 0
        ? Math.max(...[...this.policies.values()].map((p) => p.leaseMs))
        : this.defaultPolicy.leaseMs;
    const metrics = effectMetrics(env.registry);
    this.counts = newCounts(new SeriesTally(metrics.leaseLost));
    const warned = new Set<string>();
    this.ctx = {
      journal: this.journal,
      runtime: options.runtime,
      owner: this.owner,
      clock: this.clock,
      random: env.random,
      faults: env.faults,
      logger: this.logger,
      signal: this.stopping.signal,
      handlers,
      policyFor: (kind) => this.policies.get(kind) ?? this.defaultPolicy,
      messageRetry,
      counts: this.counts,
      metrics,
      noHandler: (kind) => {
        metrics.unhandled.inc({ dispatcher: this.owner, kind });
        if (warned.has(kind)) return;
        warned.add(kind);
        this.logger.warn(
          { owner: this.owner, kind, served: [...handlers.keys()] },
          `no handler registered for effect kind "${kind}": its effects stay Pending until a dispatcher serves it`,
        );
      },
      timerFired: (actorType, name, missed) => {
        metrics.timersFired.inc({ actor_type: actorType, deadline: name });
        if (missed) metrics.deadlinesMissed.inc({ actor_type: actorType, deadline: name });
      },
    };
  }

  /** This dispatcher's counts since it was built, read from the tallies that move its series (see `DispatcherCounts`). */
  get stats(): DispatcherStats {
    return statsOf(this.counts);
  }

  /** The policy used for an effect kind. */
  policy(kind: string): EffectPolicy {
    return this.ctx.policyFor(kind);
  }

  /**
   * Claim one batch of due rows, process every one of them, return how many were claimed.
   * Rejects with the first error a row step threw (an injected fault, a storage error) after
   * the other rows of the batch finished; rows left leased by a failed step are taken over
   * when their lease expires.
   */
  async runOnce(): Promise<number> {
    const token = this.freshToken();
    const ctx: StepContext = { ...this.ctx, owner: token };
    const slices = ownedSlices(this.ownership);
    const rows = await this.journal.claimOutbox({
      owner: token,
      now: this.clock.now(),
      leaseMs: this.leaseMs,
      limit: this.batchSize,
      statuses: ["pending", "resolving"],
      categories: this.categories,
      ...(slices === undefined ? {} : { slices }),
    });
    if (rows.length === 0) return 0;
    for (const row of rows)
      this.counts.claimedByQuery.onLabels(this.ctx.metrics.taken, { category: row.category, how: "claim" });
    const errors: unknown[] = [];
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const row = rows[next++] as OutboxRow;
        try {
          await this.inSlot(() => this.step(ctx, row));
        } catch (error) {
          errors.push(error);
        }
      }
    };
    const work = Promise.all(Array.from({ length: Math.min(this.concurrency, rows.length) }, worker));
    this.inFlight.add(work);
    try {
      await work;
    } finally {
      this.inFlight.delete(work);
    }
    if (errors.length > 0) throw errors[0];
    return rows.length;
  }

  /**
   * A fresh lease token per claim (and per handed-over row), not the bare owner id: a batch that
   * stalled past its lease (or a second process started with the same owner id) then fails the
   * lease check on every write and never runs a row that was claimed again after it. The
   * simulator found this one.
   */
  private freshToken(): string {
    return `${this.owner}#${++this.claims}.${Math.floor(this.ctx.random.next() * 2 ** 32).toString(36)}`;
  }

  /**
   * HandOver: take a due row at its commit when this started dispatcher serves its category and
   * kind, and its backlog of handed-over rows waiting for a slot is under one claim batch; beyond
   * that, rows are left to a claim (here or by another process) instead of piling up in memory.
   */
  lease(row: NewOutboxRow, now: number): NewOutboxRow["lease"] {
    if (!this.handingOver || this.stopping.signal.aborted) return undefined;
    if (this.waiting.length >= this.batchSize) return undefined;
    if (row.category === "event" || !this.categories.includes(row.category)) return undefined;
    if (row.category === "effect" && !this.ctx.handlers.has(row.kind)) return undefined;
    // A message to an actor of a slice another worker owns is that worker's to run (its claim).
    if (this.ownership && !this.ownership.owns(outboxSlice(row, this.ownership.sliceCount))) return undefined;
    const lease = { owner: this.freshToken(), until: now + this.leaseMs };
    // A provider that dedups by key makes a rerun after a crash harmless: the first attempt is
    // then recorded in the intent's own commit, saving the write before the call.
    if (row.category === "effect" && this.policy(row.kind).providerDedups) {
      return { ...lease, ...firstAttemptRecorded(now) };
    }
    return lease;
  }

  /**
   * HandOver: run rows committed leased to us, each under its own token, as a claim would, within
   * the same `concurrency` limit as claimed rows: a row over the limit waits, still leased, for a
   * slot (a lease that ran out meanwhile sends it through the lease-checked path). After `stop()`
   * they are left alone: their lease runs out and any dispatcher claims them.
   */
  take(rows: OutboxRow[]): void {
    if (this.stopping.signal.aborted) return;
    // Counted in `stats.claimed` too: a hand-over is a claim without the query.
    for (const row of rows)
      this.counts.handedOver.onLabels(this.ctx.metrics.taken, { category: row.category, how: "hand-over" });
    for (const row of rows) {
      const ctx: StepContext = { ...this.ctx, owner: row.leaseOwner ?? this.owner };
      const work = this.inSlot(() => {
        if (this.stopping.signal.aborted) return Promise.resolve();
        return this.step(ctx, row, true);
      }).catch((error) =>
        this.logger.error(
          { owner: ctx.owner, row: row.id, err: error },
          "handed-over row failed; its lease will expire",
        ),
      );
      this.inFlight.add(work);
      void work.finally(() => this.inFlight.delete(work));
    }
  }

  /** Run `work` in one of the `concurrency` slots shared by claimed and handed-over rows. */
  private async inSlot(work: () => Promise<void>): Promise<void> {
    if (this.busy < this.concurrency) this.busy++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      await work();
    } finally {
      // The slot passes straight to the next waiter, so `busy` never drops below the rows running.
      const next = this.waiting.shift();
      if (next) next();
      else this.busy--;
    }
  }

  /** One row's step, traced as a child of the command that requested it. `handedOver`: see `take`. */
  private step(ctx: StepContext, row: OutboxRow, handedOver = false): Promise<void> {
    // Timers are built in: every dispatcher serving effects fires them, with no handler.
    if (row.category === "effect" && row.kind === TIMER_KIND) return timerStep(ctx, row);
    if (row.category === "effect") {
      return outboxStepSpan(row, () => (handedOver ? recordedAttemptStep(ctx, row) : effectStep(ctx, row)));
    }
    if (row.category === "message") return outboxStepSpan(row, () => messageStep(ctx, row));
    return this.handBack(ctx, row);
  }

  private async handBack(ctx: StepContext, row: OutboxRow): Promise<void> {
    // Not ours (events belong to the relay): hand it back untouched after a pause.
    await this.journal.updateOutbox(
      row.id,
      ctx.owner,
      { notBefore: this.clock.now() + backoffDelay(this.defaultPolicy.backoff, 1, this.ctx.random) },
      this.clock.now(),
    );
  }

  /** Run until `stop()`: wakes at once on new rows of its categories (journal.onOutbox), polls as a fallback. */
  start(): void {
    if (this.loop) return;
    if (this.stopping.signal.aborted) throw new InvalidInputError("a stopped Dispatcher cannot be started again");
    // Woken only for rows of the categories it serves: a commit that only publishes an event sends
    // it to no claim (on PostgreSQL an empty claim per such commit, measured on the shop).
    // And, holding some slices, only for rows of those: another worker's commit wakes its owner.
    const owns = this.ownership && ((slice: number) => this.ownership?.owns(slice) ?? true);
    const unsubscribeRows = this.journal.onOutbox(() => this.wake(), this.categories, owns);
    // Slices gained have rows waiting that no commit will announce: claim at once.
    const unsubscribeOwnership = this.ownership?.onChange(() => this.wake());
    this.unsubscribe = () => {
      unsubscribeRows();
      unsubscribeOwnership?.();
    };
    this.handingOver = true;
    this.runtime.handOver?.(this, true);
    this.loop = this.runLoop();
  }

  /** Stop claiming, abort the signals of running handlers, and wait for in-flight rows to settle. */
  async stop(): Promise<void> {
    this.stopping.abort(new Error(`dispatcher ${this.owner} stopping`));
    this.handingOver = false;
    this.runtime.handOver?.(this, false);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
  }

  private wake(): void {
    this.woken = true;
    this.wakeIdle?.();
  }

  private async runLoop(): Promise<void> {
    let failures = 0;
    while (!this.stopping.signal.aborted) {
      this.woken = false;
      let claimed = 0;
      try {
        claimed = await this.runOnce();
        failures = 0;
      } catch (error) {
        failures++;
        this.logger.error({ owner: this.owner, err: error }, "dispatcher batch failed");
      }
      if (this.stopping.signal.aborted) break;
      if (claimed > 0 && failures === 0) continue;
      if (this.woken && failures === 0) continue;
      const pause =
        failures > 0 ? backoffDelay(this.defaultPolicy.backoff, failures, this.ctx.random) : this.pollIntervalMs;
      await this.idle(pause);
    }
  }

  /** Sleep until woken, stopped, or `ms` pass on the injected clock. */
  private idle(ms: number): Promise<void> {
    const cancel = new AbortController();
    const onStop = () => cancel.abort(SLEEP_CANCELLED);
    this.stopping.signal.addEventListener("abort", onStop, { once: true });
    return new Promise<void>((resolve) => {
      this.wakeIdle = () => cancel.abort(SLEEP_CANCELLED);
      if (this.woken) cancel.abort(SLEEP_CANCELLED); // woken between the batch and now
      this.clock.sleep(ms, cancel.signal).then(resolve, resolve);
    }).finally(() => {
      this.wakeIdle = undefined;
      this.stopping.signal.removeEventListener("abort", onStop);
    });
  }
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new InvalidInputError(`Dispatcher option ${name} must be a positive integer, got ${value}`);
  }
  return value;
}
