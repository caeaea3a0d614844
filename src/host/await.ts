import { AWAIT_DEFAULTS, positiveMs } from "../base/defaults.js";
import { InvalidInputError } from "../base/errors.js";
import type { ActorDefinition } from "../core/actor.js";
import { parseAddress } from "../core/address.js";
import { type Clock, SLEEP_CANCELLED } from "../core/clock.js";
import type { Typed } from "../core/decider.js";
import { evolveRecords, recover } from "../core/recovery.js";
import type { Runtime } from "../core/runtime.js";
import { type SnapshotMetrics, snapshotMetrics } from "../core/snapshot-metrics.js";
import type { EffectView } from "../effects/types.js";
import { getEffect } from "../effects/view.js";
import type { EventReader, EventRecord, OutboxReader, OutboxStore } from "../journal/types.js";
import type { CommitSignal } from "./commit-signal.js";
import { HostStoppedError, WaitTimeoutError } from "./errors.js";

export interface WaitOptions {
  /** Reject with `WaitTimeoutError` after this long (ms, on the injected clock). */
  timeoutMs?: number;
  /** Stop waiting early: the wait rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** An effect that has settled: `Completed` with the handler's result, or `Failed` with `{ error }`. */
export type SettledEffect = EffectView & { status: "Completed" | "Failed" };

/** What one look at the journal found: the awaited value, or why it is not there yet. */
export type Check<T> = { done: true; value: T } | { done: false; detail: string };

/** What a waiter reads of the journal: an actor's stream, an effect's row, and the outbox wake-up. */
export type AwaiterJournal = Pick<EventReader, "latestSnapshot" | "readStream"> &
  Pick<OutboxReader, "getOutbox"> &
  Pick<OutboxStore, "onOutbox">;

export interface AwaiterOptions {
  /** The journal the runtime writes through. */
  journal: AwaiterJournal;
  signal: CommitSignal;
  runtime: Runtime;
  clock: Clock;
  /** Aborted when the owner (a host) stops: every wait then rejects. */
  stopped?: AbortSignal;
  /** Where a wait's recovery counts the snapshots it migrated or ignored (default: a registry of its own). */
  snapshotMetrics?: SnapshotMetrics;
}

/**
 * Waits for results without a busy loop. A waiter looks at the journal once, then sleeps until
 * one of: a write of this process touched what it waits for (`CommitSignal`, which hands a
 * stream's waiters what the commit appended), the journal's outbox wake-up fired for a change it
 * cannot describe (on PostgreSQL another process's NOTIFY), or its poll interval passed
 * (doubling from `pollFirstMs` to `pollMaxMs`, reset by every wake-up). The poll is what
 * catches another process's commit that sends no NOTIFY (an outcome, an event-only commit), so
 * across processes a result is seen at most `pollMaxMs` late.
 */
export class Awaiter {
  // Built once: a set of metrics is a registry and two counters (tens of µs), too dear for every wait.
  private readonly snapshotMetrics: SnapshotMetrics;

  constructor(private readonly options: AwaiterOptions) {
    this.snapshotMetrics = options.snapshotMetrics ?? snapshotMetrics();
  }

  /**
   * Resolve with the actor's state once `predicate(state)` holds (checked at once, then after
   * every change of the actor's stream). Rejects with `WaitTimeoutError` naming the address.
   * The state is the journal's: what was committed, by this process or another.
   */
  async waitFor<S>(
    address: string,
    predicate: (state: S) => boolean,
    options: WaitOptions = {},
  ): Promise<{ state: S; version: number }> {
    const { runtime } = this.options;
    // An unknown actor type fails now, naming it, not at the timeout.
    const definition = runtime.definition(address) as ActorDefinition<S, Typed, Typed>;
    const { journal } = this.options;
    // Rebuilt here from the journal, never through the runtime: waiting activates no actor (no
    // `onRecovered` commands from a process that only waits) and takes no turn in its mailbox.
    let current: { state: S; version: number } | undefined;
    // What this process's commits appended to the stream since the last look, as `commit` returned it.
    let heard: EventRecord[] = [];
    const follow = (appended: readonly EventRecord[]) => {
      heard.push(...appended);
    };
    return this.until(`actor ${address}`, { keys: [address], follow }, options, async (blind) => {
      const recovering = current === undefined;
      if (!current) {
        const { state, version } = await recover(
          journal,
          definition,
          address,
          parseAddress(address).id,
          runtime.logger,
          this.snapshotMetrics,
        );
        current = { state, version };
      }
      // This process's commits are followed from what they appended, in version order, with no
      // read. A version missing before one heard (another process committed it), or a look that
      // cannot tell what changed (the poll, another process's wake-up), reads the stream's tail.
      const records = heard.sort((a, b) => a.version - b.version);
      heard = [];
      let gap = false;
      for (const record of records) {
        if (record.version <= current.version) continue;
        if (record.version !== current.version + 1) {
          gap = true;
          break;
        }
        current = { state: evolveRecords(definition, current.state, [record]), version: record.version };
      }
      // The first look's recovery read the stream after whatever woke it.
      if ((blind && !recovering) || gap) {
        const tail = await journal.readStream(address, current.version + 1);
        const last = tail[tail.length - 1];
        if (last) current = { state: evolveRecords(definition, current.state, tail), version: last.version };
      }
      if (predicate(current.state)) return { done: true, value: current };
      return { done: false, detail: `its state at version ${current.version} does not satisfy the predicate` };
    });
  }

  /**
   * Resolve once the effect `key` has settled, i.e. its owner recorded the final outcome
   * (the outbox row is marked done in that same commit). A row that went `dead` (an outcome its
   * owner could not record) resolves as `Failed` with the row's last error.
   */
  waitForEffect(key: string, options: WaitOptions = {}): Promise<SettledEffect> {
    if (!key) throw new InvalidInputError("waitForEffect needs an effect key");
    const { journal } = this.options;
    return this.until(`effect ${key}`, { keys: [key] }, options, async () => {
      const view = await getEffect(journal, key);
      if (view.status === "Completed" || view.status === "Failed") return { done: true, value: view as SettledEffect };
      if (view.status === "NotRequested") return { done: false, detail: "no effect with this key has been requested" };
      const lastError = "lastError" in view && view.lastError ? `, last error: ${view.lastError}` : "";
      return { done: false, detail: `it is ${view.status} after ${view.attempts} attempt(s)${lastError}` };
    });
  }

  /**
   * The wait loop: `check` until done, sleeping between looks until a wake-up (a write of this
   * process touching one of `watch.keys`, every write for `"all"`), another process's outbox
   * wake-up, or the poll interval. `check` is told whether the look is blind: whether anything
   * other than a followed write (`watch.follow`, given what a commit appended to a watched stream)
   * woke it since the last look: the first look, the poll, an outbox wake-up, a write of a key not
   * followed. A look that is not blind knows every change from what it was handed, and need read nothing.
   */
  async until<T>(
    awaited: string,
    watch: Watch,
    options: WaitOptions,
    check: (blind: boolean) => Promise<Check<T>>,
  ): Promise<T> {
    const { signal, clock, stopped, runtime } = this.options;
    const timeoutMs = positiveMs("timeoutMs", options.timeoutMs ?? AWAIT_DEFAULTS.timeoutMs);
    const deadline = clock.now() + timeoutMs;
    let woken = false;
    let blind = true;
    let wakeNap: (() => void) | undefined;
    const nudge = () => {
      woken = true;
      wakeNap?.();
    };
    // Woken by what cannot be followed (another process's wake-up, a write not followed) since the last look.
    let heardBlind = false;
    const blindNudge = () => {
      blind = true;
      heardBlind = true;
      nudge();
    };
    const { follow } = watch;
    const onWrite = (appended?: readonly EventRecord[]) => {
      if (follow && appended) {
        follow(appended);
        nudge();
      } else blindNudge();
    };
    const cancel = () => wakeNap?.();
    const unsubscribe = [
      ...(watch.keys === "all" ? [signal.watchAll(blindNudge)] : watch.keys.map((key) => signal.watch(key, onWrite))),
      // Only the wake-ups that cannot say what was added (another process's NOTIFY, an update, a
      // reconnect): a row added by this process's commit comes with a write already signalled
      // above. Listening to every outbox wake-up made each commit that adds a row nobody was
      // handed (an integration event for the relay) wake every waiter of the process.
      this.options.journal.onOutbox(blindNudge, []),
    ];
    const unlisten = [stopped, options.signal].map((abort) => (abort ? onAbort(abort, cancel) : () => {}));
    let pollMs: number = AWAIT_DEFAULTS.pollFirstMs;
    try {
      for (;;) {
        if (stopped?.aborted) throw new HostStoppedError(awaited);
        options.signal?.throwIfAborted();
        woken = false;
        const look = blind;
        blind = false;
        const result = await check(look);
        if (result.done) return result.value;
        const left = deadline - clock.now();
        if (left <= 0) throw new WaitTimeoutError(awaited, timeoutMs, result.detail);
        // Stopped or aborted during the look: the next turn of the loop says so, without a nap first.
        if (!woken && !stopped?.aborted && !options.signal?.aborted) {
          const napping = nap(clock, Math.min(pollMs, left));
          wakeNap = napping.wake;
          await napping.slept;
          wakeNap = undefined;
        }
        // Slept the whole interval: the poll, which looks at the journal itself.
        if (!woken) blind = true;
        // The poll looks for what no wake-up announces: it starts again from its first interval after
        // a blind wake-up (something may be moving elsewhere), doubles after a nap slept through, and
        // is left as it is by a followed commit, which tells nothing of other processes. Reset by
        // every commit, a wait whose actor commits a little slower than the first interval polled
        // (a read) between each two of its commits.
        pollMs = !woken
          ? Math.min(pollMs * 2, AWAIT_DEFAULTS.pollMaxMs)
          : heardBlind
            ? AWAIT_DEFAULTS.pollFirstMs
            : pollMs;
        heardBlind = false;
      }
    } finally {
      for (const off of [...unsubscribe, ...unlisten]) off();
    }
  }
}

/** What a wait watches: the keys whose writes wake it, and for a stream, what follows its commits. */
export interface Watch {
  /** Streams or outbox row ids (a write of this process touching one wakes the wait), or every write. */
  keys: string[] | "all";
  /** Handed what each commit of this process appended to a watched stream; without it, such a wake-up is blind. */
  follow?: (appended: readonly EventRecord[]) => void;
}

/**
 * Sleep `ms` on `clock`, or until `wake()`. With the clock's `timer` when it has one: a wait naps
 * between most of its looks, and an AbortController and an abort event per nap cost more than the
 * look itself once the look reads nothing.
 */
function nap(clock: Clock, ms: number): { slept: Promise<void>; wake: () => void } {
  const timer = clock.timer?.bind(clock);
  if (timer) {
    let wake = () => {};
    const slept = new Promise<void>((resolve) => {
      const cancel = timer(ms, resolve);
      wake = () => {
        cancel();
        resolve();
      };
    });
    return { slept, wake };
  }
  const sleeper = new AbortController();
  return { slept: clock.sleep(ms, sleeper.signal).catch(() => {}), wake: () => sleeper.abort(SLEEP_CANCELLED) };
}

/** One 'abort' listener on a signal and the waits it cancels. */
interface Fanout {
  waits: Set<() => void>;
  remove(): void;
}
/** Per signal listened on: the host's stop signal, a caller's signal shared by many waits. */
const fanouts = new WeakMap<AbortSignal, Fanout>();

/**
 * Call `cancel` when `signal` aborts, through one 'abort' listener per signal however many waits
 * are on it (a listener per wait made Node warn, `MaxListenersExceededWarning`, from the eleventh
 * concurrent wait on one signal). The listener goes with the signal's last wait, so a long-lived
 * signal keeps nothing of ours between waits. Returns what ends this wait's interest.
 */
function onAbort(signal: AbortSignal, cancel: () => void): () => void {
  let fanout = fanouts.get(signal);
  if (!fanout) {
    const waits = new Set<() => void>();
    const listener = () => {
      for (const wait of [...waits]) wait();
    };
    signal.addEventListener("abort", listener, { once: true });
    fanout = {
      waits,
      remove: () => {
        signal.removeEventListener("abort", listener);
        fanouts.delete(signal);
      },
    };
    fanouts.set(signal, fanout);
  }
  const { waits, remove } = fanout;
  waits.add(cancel);
  return () => {
    waits.delete(cancel);
    if (waits.size === 0) remove();
  };
}
