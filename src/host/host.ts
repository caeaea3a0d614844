import type { Registry } from "prom-client";
import { HOST_DEFAULTS, positiveMs } from "../base/defaults.js";
import { InvalidInputError } from "../base/errors.js";
import type { AnyActor } from "../core/actor.js";
import type { Clock, IdGenerator, Random } from "../core/clock.js";
import type { Typed } from "../core/decider.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Faults } from "../core/faults.js";
import type { Logger } from "../core/logger.js";
import { Runtime, type RuntimeOptions, type SendOptions, type SendResult } from "../core/runtime.js";
import type { Ownership } from "../core/slices.js";
import { snapshotMetrics } from "../core/snapshot-metrics.js";
import { Dispatcher, type DispatcherOptions } from "../effects/dispatcher.js";
import { Reconciliation } from "../effects/reconciliation.js";
import type { EffectHandler } from "../effects/types.js";
import type { Journal, OutboxRow } from "../journal/types.js";
import { Consumer } from "../messaging/consumer.js";
import type { ConsumerOptions } from "../messaging/consumer-options.js";
import { messagingMetrics } from "../messaging/metrics.js";
import { Relay, type RelayOptions } from "../messaging/relay.js";
import type { Subscription, Transport } from "../messaging/transport.js";
import { JournalTransport } from "../messaging/transports/journal.js";
import { SliceLeaseManager } from "../ownership/lease-manager.js";
import { CommandRouter, type CommandRouterOptions, type RoutedResult } from "../ownership/router.js";
import type { RetentionJob } from "../retention/job.js";
import { Awaiter, type SettledEffect, type WaitOptions } from "./await.js";
import { CommitSignal } from "./commit-signal.js";
import { GapWatch } from "./gap-watch.js";
import { type ActorHandle, actorHandle, type CommandsOf, type StateOf } from "./handles.js";
import { HostPeering, type HostPeers } from "./peers.js";
import { type HostRetention, retentionJobs } from "./retention.js";

export type { HostRetention } from "./retention.js";

import { TrackedTransport } from "./tracked-transport.js";

/** What every component of a host shares; given once, passed to each. */
type Shared = "journal" | "clock" | "ids" | "random" | "faults" | "logger" | "registry";

/**
 * Which slices of actors this host runs: an `Ownership` of the caller's (started and stopped by
 * the caller), or leases in the journal, held by a `SliceLeaseManager` the host starts and stops.
 */
export type HostOwnership =
  | Ownership
  | {
      leases: {
        /** This worker's id, unique among the workers sharing the journal. */
        workerId: string;
        sliceCount?: number;
        leaseMs?: number;
        maxMovesPerRound?: number;
      };
    };

/** A consumer of integration events, subscribed by the host to `subjects`. */
export type HostConsumer = Omit<ConsumerOptions, Shared | "runtime"> & {
  subjects: string[];
  /** Messages handled at once (the transport's default when absent). */
  concurrency?: number;
  /** Where it subscribes; the relay's transport when absent. */
  transport?: Transport;
  /**
   * Sequenced: how often the host checks this consumer's gaps (see `HostOptions.gapCheckEveryMs`,
   * whose value it overrides); `false`: never, the application calls `checkGaps()` itself.
   */
  gapCheckEveryMs?: number | false;
};

export interface HostOptions {
  journal: Journal;
  actors: AnyActor[];
  /** Effect handlers, one per kind, run by the host's dispatcher. */
  // biome-ignore lint/suspicious/noExplicitAny: handlers of every input and result type
  handlers?: EffectHandler<any, any>[];
  /** This host's name, the prefix of its lease owners (`NAME/dispatcher`, `NAME/relay`); unique per process. */
  name?: string;
  /** Runtime tuning (cache size, idle time, conflict retries). */
  runtime?: Omit<RuntimeOptions, Shared | "actors">;
  /** Dispatcher tuning (batch size, concurrency, poll, default policy, message retries). */
  dispatcher?: Omit<DispatcherOptions, Shared | "runtime" | "handlers" | "owner">;
  /**
   * Where integration events travel: a relay publishes the outbox's events to it, and every
   * consumer without a transport of its own subscribes to it. `"journal"`: the durable embedded
   * transport on this host's journal (`JournalTransport`); or a transport (`natsTransport(...)`).
   */
  transport?: Transport | "journal";
  /**
   * Relay tuning (its transport is `transport` unless given here); `false`: no relay in this
   * process (it only consumes). Without `transport` or a relay transport, no relay runs. The events
   * this host's actors publish are handed over at commit (see `Relay.handOverTo`): given in memory
   * to this host's consumers that subscribe to the relay's transport, and published with no
   * claim; on a `JournalTransport` of this host's journal (`"journal"`, or one made on it) the
   * commit itself appends them to the published log, with no outbox row. `handOver: false`
   * leaves every event to the relay's claim.
   */
  relay?:
    | (Omit<RelayOptions, Shared | "owner" | "transport"> & {
        transport?: Transport;
        handOver?: boolean;
        /** `false`: events go through outbox rows even on this journal's own transport (default: by their commit). */
        atCommit?: boolean;
      })
    | false;
  consumers?: HostConsumer[];
  /**
   * How often the host checks the gaps of every sequenced consumer, from `start()` to `stop()`
   * (clock time; default `HOST_DEFAULTS.gapCheckEveryMs`): a gap open past the consumer's
   * `gapTimeoutMs` is then alerted, and its reconciliation hook run, with no call from the
   * application. `false`: never (the application calls `consumer.checkGaps()` itself).
   */
  gapCheckEveryMs?: number | false;
  clock?: Clock;
  ids?: IdGenerator;
  random?: Random;
  faults?: Faults;
  logger?: Logger;
  /**
   * Where the metrics of every component go: the runtime's, the dispatcher's, the relay's and the
   * consumers' (a relay or consumer given its own `metrics` keeps them). When absent, one private
   * registry of this host's (see `resolveEnvironment`).
   */
  registry?: Registry;
  /**
   * Which actors this host runs (default: all of them). With `{ leases }`, the host's workers
   * share the slices by leases in the journal (PostgreSQL, for several processes): `start()`
   * takes this worker's share before anything else starts, `stop()` lets its slices go once
   * their commands settled. See docs/design/ownership.md.
   */
  ownership?: HostOwnership;
  /** The router's tuning (how long a forward waits for its reply, the poll), with an ownership. */
  router?: Pick<CommandRouterOptions, "timeoutMs" | "pollMs">;
  /**
   * With `ownership: { leases }`: serve this worker's slices to the other workers, and send theirs
   * straight to them, over HTTP signed with a shared secret, before the journal path (see
   * `HostPeers` and docs/design/routing.md).
   */
  peers?: HostPeers;
  /**
   * Pruning of the journal's housekeeping records, run from `start()` to `stop()` on the host's
   * clock: `true` for the inbox's dedup records, the outbox's done rows and the journal
   * transport's published log, each with its defaults; an object to tune or leave out each one
   * (see `HostRetention`). Absent: none (prune with the CLI or jobs of your own). One process of
   * a deployment is enough; several prune the same rows harmlessly.
   */
  retention?: HostRetention;
}

/**
 * One process's share of an oncely system, wired from one description: a runtime for the
 * actors, a dispatcher for their effects and messages, a relay for their integration events,
 * and consumers. `start()` starts them, `stop()` stops them all in order, `drain()` waits
 * until nothing is left to do now, and `waitFor` / `waitForEffect` await results.
 * The runtime's, dispatcher's, relay's and consumers' tuning defaults are their own (see
 * `src/base/defaults.ts`); the host sets only what it shares or runs itself: a name (`host-` and
 * a fresh id), the system clock, random ids, the default logger (warnings on stderr), and
 * `HOST_DEFAULTS.gapCheckEveryMs`.
 *
 * The journal and the transports are the caller's: the host never closes them.
 *
 * @example
 * const host = createHost({ journal, actors: [checkout], handlers: [payment] });
 * await host.start();
 * await host.send("checkout/42", { type: "Checkout", amount: 1999 }, { messageId: "req-1" });
 * const { state } = await host.waitFor<Checkout>("checkout/42", (s) => s.payment === "Completed");
 * await host.stop();
 */
export class Host {
  readonly name: string;
  /** The journal every component of this host writes through (the given one, observed for waits). */
  readonly journal: Journal;
  readonly runtime: Runtime;
  /** Present when the host was given an ownership: where its commands go. */
  readonly router: CommandRouter | undefined;
  readonly dispatcher: Dispatcher;
  readonly relay: Relay | undefined;
  /** The slices this host runs; a lease manager the host started when given `{ leases }`. */
  readonly ownership: Ownership | undefined;
  private readonly leases: SliceLeaseManager | undefined;
  private readonly peering: HostPeering | undefined;
  readonly consumers: readonly Consumer[];
  /** The operator's queue of Unknown effects on this host's journal: list them, settle one (see `Reconciliation`). */
  readonly reconciliation: Reconciliation;
  /** The pruning jobs `retention` asked for (none without it). */
  readonly retention: readonly RetentionJob[];
  private readonly actors: readonly AnyActor[];
  private readonly signal: CommitSignal;
  private readonly awaiter: Awaiter;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly transports: TrackedTransport[] = [];
  private readonly subscriptions: {
    consumer: Consumer;
    transport: TrackedTransport;
    options: HostConsumer;
    /** Sequenced and watched: the gap check interval. */
    gapCheckEveryMs: number | undefined;
  }[] = [];
  private readonly stopping = new AbortController();
  private running: { consumer: Consumer; subscription: Subscription }[] | undefined;
  private readonly gapWatches: GapWatch[] = [];
  private stopped: Promise<void> | undefined;
  /** The journal transport `transport: "journal"` made: the host's to close, unlike one given to it. */
  private ownTransport: JournalTransport | undefined;

  constructor(options: HostOptions) {
    if (!options.journal) throw new InvalidInputError("createHost needs a journal");
    if (!Array.isArray(options.actors))
      throw new InvalidInputError("createHost needs actors: an array of actor definitions");
    this.actors = options.actors;
    // Resolved once: every component below gets these same parts (see docs/guide/environment.md).
    const env = resolveEnvironment(options);
    const ids = env.ids;
    this.name = options.name ?? `host-${ids.next()}`;
    this.clock = env.clock;
    this.logger = env.logger;
    this.signal = new CommitSignal(options.journal);
    this.journal = this.signal.journal;
    const registry = { registry: env.registry };
    const shared = {
      journal: this.journal,
      clock: this.clock,
      random: env.random,
      faults: env.faults,
      logger: env.logger,
    };
    // Messaging metrics are one set per registry, shared by the relay and every consumer.
    const messaging = { metrics: messagingMetrics(env.registry) };
    const given = options.ownership;
    // Lease commits go to the given journal, not the observed one: they are no actor's commits.
    const peering = options.peers && new HostPeering(options.peers, given !== undefined && "leases" in given);
    this.peering = peering;
    this.leases =
      given && "leases" in given
        ? new SliceLeaseManager({
            ...given.leases,
            ...shared,
            ...registry,
            journal: options.journal,
            ...(peering ? { endpoint: () => peering.endpoint } : {}),
          })
        : undefined;
    this.ownership = this.leases ?? (given as Ownership | undefined);
    const ownership = this.ownership === undefined ? {} : { ownership: this.ownership };
    this.runtime = new Runtime({
      ...options.runtime,
      ...shared,
      ...registry,
      ...ownership,
      ids,
      actors: options.actors,
    });
    const leases = this.leases;
    this.router =
      this.ownership &&
      new CommandRouter({
        ...options.router,
        ...registry,
        runtime: this.runtime,
        journal: this.journal,
        ownership: this.ownership,
        clock: this.clock,
        logger: env.logger,
        ids,
        ...(peering && leases ? { peers: peering.routerPeers(leases) } : {}),
      });
    if (peering && this.ownership) peering.serve(this.runtime, this.ownership, env.logger, env.registry);
    this.dispatcher = new Dispatcher({
      ...options.dispatcher,
      ...shared,
      ...registry,
      ...ownership,
      runtime: this.router ?? this.runtime,
      owner: `${this.name}/dispatcher`,
      handlers: options.handlers ?? [],
    });
    if (options.transport === "journal") {
      this.ownTransport = new JournalTransport({
        journal: this.journal,
        clock: this.clock,
        random: env.random,
        logger: env.logger,
      });
    }
    const wired = options.transport === "journal" ? this.ownTransport : options.transport;
    const relay = options.relay === false ? undefined : options.relay;
    const relayTransport = options.relay === false ? undefined : (relay?.transport ?? wired);
    this.relay =
      relayTransport &&
      new Relay({
        ...messaging,
        ...relay,
        transport: relayTransport,
        ...shared,
        ...ownership,
        owner: `${this.name}/relay`,
      });
    const hostEvery = options.gapCheckEveryMs ?? HOST_DEFAULTS.gapCheckEveryMs;
    if (hostEvery !== false) positiveMs("createHost gapCheckEveryMs", hostEvery);
    const consumers: Consumer[] = [];
    for (const consumer of options.consumers ?? []) {
      const transport = consumer.transport ?? wired ?? relay?.transport;
      if (!transport) {
        throw new InvalidInputError(
          `consumer "${consumer.name}" has no transport: give it one, or give the host a transport`,
        );
      }
      const commands = this.router ? { commands: this.router } : {};
      const built = new Consumer({ ...messaging, ...consumer, ...shared, ...commands, ids, runtime: this.runtime });
      consumers.push(built);
      this.subscriptions.push({
        consumer: built,
        transport: this.track(transport),
        options: consumer,
        gapCheckEveryMs: gapCheckEvery(built, consumer.gapCheckEveryMs, hostEvery),
      });
    }
    this.consumers = consumers;
    if (this.relay && relay?.handOver !== false) {
      const local = this.subscriptions
        .filter(({ options: own }) => (own.transport ?? wired ?? relay?.transport) === relayTransport)
        .map(({ consumer, options: own }) => ({ consumer, subjects: own.subjects }));
      // The relay's transport is this journal's own published log: each commit appends its events.
      const atCommit =
        relay?.atCommit !== false &&
        relayTransport instanceof JournalTransport &&
        relayTransport.logOf(options.journal, this.journal);
      this.relay.handOverTo(this.runtime, local, { atCommit });
    }
    const logger = options.logger === undefined ? {} : { logger: options.logger };
    this.reconciliation = new Reconciliation({ journal: this.journal, clock: this.clock, ...logger });
    this.retention = retentionJobs(options.retention, { journal: this.journal, clock: this.clock, ...logger });
    this.awaiter = new Awaiter({
      journal: this.journal,
      signal: this.signal,
      runtime: this.runtime,
      clock: this.clock,
      stopped: this.stopping.signal,
      // The runtime's own set (one set per registry), so a wait's recovery counts there too.
      snapshotMetrics: snapshotMetrics(env.registry),
    });
  }

  /**
   * Take this worker's share of slices (with `{ leases }`), then start the dispatcher, the relay,
   * every consumer's subscription, the gap checks of the sequenced ones, and the retention jobs.
   */
  async start(): Promise<void> {
    if (this.stopping.signal.aborted) throw new InvalidInputError(`host ${this.name} was stopped; create a new one`);
    if (this.running) return;
    this.running = [];
    await this.peering?.listen(); // before the first lease round: its heartbeat says where this worker is
    await this.leases?.start();
    this.dispatcher.start();
    this.relay?.start();
    for (const { consumer, transport, options, gapCheckEveryMs } of this.subscriptions) {
      const subscribe = {
        subjects: options.subjects,
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        // A transport that partitions events by slice gives this worker its slices' events only.
        ownership: this.ownership,
      };
      this.running.push({ consumer, subscription: await consumer.subscribe(transport, subscribe) });
      if (gapCheckEveryMs !== undefined) {
        this.gapWatches.push(new GapWatch(consumer, gapCheckEveryMs, this.clock, this.logger));
      }
    }
    for (const job of this.retention) job.start();
  }

  /**
   * Stop everything, in the order that loses nothing: waits reject; retention jobs and gap checks
   * stop (a run in progress finishes); consumers stop taking messages and finish the ones in hand; the
   * dispatcher stops claiming and lets running handlers settle; the relay stops; the runtime
   * closes. Unfinished work stays in the journal and the broker for the next start (of this host
   * or another). Safe to call twice.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping.abort();
      // Peers' commands stop first: a sender finds the port closed and takes the journal path.
      await this.peering?.close();
      await Promise.all(this.retention.map((job) => job.stop()));
      await Promise.all(this.gapWatches.map((watch) => watch.stop()));
      await Promise.all((this.running ?? []).map(({ subscription }) => subscription.stop()));
      await this.dispatcher.stop();
      await this.relay?.stop();
      await this.leases?.stop();
      await this.ownTransport?.close();
      this.runtime.close();
    })();
    return this.stopped;
  }

  /**
   * A typed handle on one of this host's actors: `send(id, command)` takes only its commands,
   * `state(id)` and `waitFor(id, predicate)` know its state (see `ActorHandle`).
   */
  actor<A extends AnyActor>(definition: A): ActorHandle<StateOf<A>, CommandsOf<A>> {
    return actorHandle(this, this.actors, definition);
  }

  /**
   * Handle a command (see `Runtime.send`); with an ownership, on the worker that owns the actor's
   * slice (see `CommandRouter.send`: a forwarded command's result has no version nor events).
   */
  send<C extends Typed>(address: string, command: C, options: SendOptions = {}): Promise<SendResult | RoutedResult> {
    return this.router ? this.router.send(address, command, options) : this.runtime.send(address, command, options);
  }

  /** An actor's current state (see `Runtime.state`). */
  state<S = unknown>(address: string): Promise<{ state: S; version: number }> {
    return this.runtime.state<S>(address);
  }

  /** Resolve with the actor's state once `predicate` holds; see `Awaiter.waitFor`. */
  waitFor<S>(address: string, predicate: (state: S) => boolean, options?: WaitOptions) {
    return this.awaiter.waitFor<S>(address, predicate, options);
  }

  /** Resolve once effect `key` has settled; see `Awaiter.waitForEffect`. */
  waitForEffect(key: string, options?: WaitOptions): Promise<SettledEffect> {
    return this.awaiter.waitForEffect(key, options);
  }

  /**
   * Resolve when nothing is left to do now, as one look finds it with no commit of this process
   * landing meanwhile:
   * - no due outbox row (effect, lookup, message, and unpublished event when this host has a
   *   relay; leased rows are in flight);
   * - every consumer of the host (once started) has reached the end of its transport's log: no
   *   message left for its subscription (`Subscription.pending`: not yet delivered, in a
   *   handler's hands, waiting for a handler slot or for a redelivery);
   * - no parked message of a started sequenced consumer is releasable (its predecessor applied:
   *   left by a crash between an apply and its release); drain releases those itself, as a gap
   *   check would.
   * A message parked behind a real gap is not waited for (the gap check alerts on it), nor are
   * durable timers and lookups due later, or the reconciliation queue. Rejects with
   * `WaitTimeoutError` listing what remained. Reads the whole due outbox, the parked messages
   * and each subscription's backlog on each look: meant for shutdown and tests, not a hot path.
   */
  drain(options: WaitOptions = {}): Promise<void> {
    return this.awaiter.until("drain", { keys: "all" }, options, async () => {
      // Work flows from the outbox to the transports to the consumers, and is looked at in that
      // order; a handler's commit may start new work upstream (a process manager's command), so
      // a look during which any commit of this process landed proves nothing.
      let moved = false;
      const stopWatching = this.signal.watchAll(() => {
        moved = true;
      });
      try {
        const now = this.clock.now();
        const rows = await this.journal.listOutbox({ status: ["pending", "resolving"] });
        const due = rows.filter((row) => row.notBefore <= now && (row.category !== "event" || this.relay));
        const delivering = this.transports.reduce((sum, transport) => sum + transport.inFlight, 0);
        const left = await Promise.all(
          (this.running ?? []).map(async ({ consumer, subscription }) => ({
            consumer: consumer.name,
            pending: await subscription.pending(),
          })),
        );
        const released = await Promise.all((this.running ?? []).map(({ consumer }) => this.releaseParked(consumer)));
        const state: Remaining = {
          due,
          delivering,
          left: left.filter((l) => l.pending > 0),
          released: released.filter((r) => r.count > 0 || r.error),
          moved,
        };
        const idle =
          due.length === 0 && delivering === 0 && state.left.length === 0 && state.released.length === 0 && !moved;
        return idle ? { done: true, value: undefined } : { done: false, detail: remaining(state) };
      } finally {
        stopWatching();
      }
    });
  }

  /**
   * Release what a sequenced consumer has parked behind a version already applied (or at or
   * below it: stale). Normally the apply itself releases its successors; a crash between the two
   * leaves them, until a gap check or this.
   */
  private async releaseParked(consumer: Consumer): Promise<{ consumer: string; count: number; error?: string }> {
    if (consumer.mode !== "sequenced") return { consumer: consumer.name, count: 0 };
    const parked = await this.journal.listParked(consumer.name);
    const checkpoints = new Map<string, number>();
    const sources = new Set<string>();
    let count = 0;
    for (const row of parked) {
      let checkpoint = checkpoints.get(row.source);
      if (checkpoint === undefined) {
        checkpoint = await this.journal.getCheckpoint(consumer.name, row.source);
        checkpoints.set(row.source, checkpoint);
      }
      if (row.version > checkpoint + 1) continue;
      sources.add(row.source);
      count++;
    }
    try {
      for (const source of sources) await consumer.release(source);
      return { consumer: consumer.name, count };
    } catch (error) {
      this.logger.warn({ consumer: consumer.name, err: error }, "drain could not release parked messages");
      return { consumer: consumer.name, count, error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** One tracked wrapper per transport, however many consumers share it. */
  private track(transport: Transport): TrackedTransport {
    const known = this.transports.find((tracked) => tracked.wraps(transport));
    if (known) return known;
    const tracked = new TrackedTransport(transport, () => this.signal.poke());
    this.transports.push(tracked);
    return tracked;
  }
}

/** The gap check interval of a consumer: its own, else the host's; none for a facts consumer or when opted out. */
function gapCheckEvery(consumer: Consumer, own: number | false | undefined, host: number | false): number | undefined {
  if (typeof own === "number") {
    if (consumer.mode !== "sequenced") {
      throw new InvalidInputError(
        `consumer "${consumer.name}" is not sequenced: it has no gaps to check (gapCheckEveryMs ${own})`,
      );
    }
    return positiveMs(`consumer "${consumer.name}" gapCheckEveryMs`, own);
  }
  if (consumer.mode !== "sequenced" || own === false || host === false) return undefined;
  return host;
}

/** What one look of `drain` found left. */
interface Remaining {
  due: OutboxRow[];
  delivering: number;
  left: { consumer: string; pending: number }[];
  released: { consumer: string; count: number; error?: string }[];
  moved: boolean;
}

function remaining({ due, delivering, left, released, moved }: Remaining): string {
  const shown = due
    .slice(0, 5)
    .map((row) => `${row.category} ${row.kind} ${row.id} (${row.status}${row.lastError ? `: ${row.lastError}` : ""})`);
  const more = due.length > shown.length ? `, and ${due.length - shown.length} more` : "";
  return [
    due.length > 0 ? `${due.length} due outbox row(s): ${shown.join("; ")}${more}` : "",
    delivering > 0 ? `${delivering} delivery(ies) in flight` : "",
    ...left.map((l) => `consumer ${l.consumer}: ${l.pending} message(s) left in its transport`),
    ...released.map(
      (r) =>
        `consumer ${r.consumer}: ${r.count} releasable parked message(s)${r.error ? ` (release failed: ${r.error})` : ", released"}`,
    ),
    moved ? "commits landed during the look" : "",
  ]
    .filter(Boolean)
    .join("; ");
}

/** Build a host from one description; see `Host`. */
export function createHost(options: HostOptions): Host {
  return new Host(options);
}
