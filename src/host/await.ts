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

/**
 * What a wait makes of a commit of this process it follows, decided in the commit's own turn:
 * the awaited value (the wait resolves there and then), `"read"` (it cannot tell from what the
 * commit appended: a look must read the journal), or `"followed"` (not yet; nothing to read).
 */
export type Followed<T> = { done: true; value: T } | "read" | "followed";

/** What a wait watches: the keys whose writes wake it, and for a stream, what follows its commits. */
export interface Watch<T> {
  /** Streams or outbox row ids (a write of this process touching one wakes the wait), or every write. */
  keys: string[] | "all";
  /** Handed what each commit of this process appended to a watched stream; without it, such a write asks for a look. */
  follow?: (appended: readonly EventRecord[]) => Followed<T>;
}

/** What a waiter reads of the journal: an actor's stream, an effect's row, and the outbox wake-up. */
export type AwaiterJournal = Pick<EventReader, "readFromSnapshot" | "readStream"> &
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

type Versioned<S> = { state: S; version: number };

/**
 * Waits for results without a busy loop. A waiter looks at the journal once, then sleeps until
 * one of: a write of this process touched what it waits for (`CommitSignal`, which hands a
 * stream's waiters what the commit appended), the journal's outbox wake-up fired for a change it
 * cannot describe (on PostgreSQL another process's NOTIFY), or its poll interval passed with
 * nothing followed (doubling from `pollFirstMs` to `pollMaxMs`, reset by every wake-up that asks
 * for a look). The poll is what catches another process's commit that sends no NOTIFY (an
 * outcome, an event-only commit), so across processes a result is seen at most `pollMaxMs` late.
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
   *
   * The first look rebuilds the state from the journal. After it, a commit of this process is
   * followed from the records it appended, in the commit's own turn: when it satisfies the
   * predicate the wait resolves before the commit's caller goes on, with no read, whether a poll's
   * read is in flight or not (its answer is then dropped). The stream is read again only for what
   * this process did not write: a version missing before one it appended, the poll, another
   * process's wake-up.
   */
  waitFor<S>(
    address: string,
    predicate: (state: S) => boolean,
    options: WaitOptions = {},
  ): Promise<{ state: S; version: number }> {
    const { runtime, journal } = this.options;
    let definition: ActorDefinition<S, Typed, Typed>;
    try {
      // An unknown actor type fails now, naming it, not at the timeout.
      definition = runtime.definition(address) as ActorDefinition<S, Typed, Typed>;
    } catch (error) {
      return Promise.reject(error);
    }
    // Rebuilt here from the journal, never through the runtime: waiting activates no actor (no
    // `onRecovered` commands from a process that only waits) and takes no turn in its mailbox.
    let current: Versioned<S> | undefined;
    // Records handed by commits of this process and not applied yet: the first look is still
    // reading, or a version before them is missing (another process committed it).
    let held: EventRecord[] = [];
    const known = () => current as Versioned<S>;
    /** Apply the held records and `records` past the version held, in order; false when one is missing. */
    const advance = (records: readonly EventRecord[]): boolean => {
      const pending = held.length === 0 ? records : [...held, ...records].sort((a, b) => a.version - b.version);
      held = [];
      let { state, version } = known();
      for (let i = 0; i < pending.length; i++) {
        const record = pending[i] as EventRecord;
        if (record.version <= version) continue;
        if (record.version !== version + 1) {
          held = pending.slice(i);
          break;
        }
        state = evolveRecords(definition, state, [record]);
        version = record.version;
      }
      if (version !== known().version) current = { state, version };
      return held.length === 0;
    };
    const readTail = async () => {
      advance(await journal.readStream(address, known().version + 1));
    };
    const follow = (appended: readonly EventRecord[]): Followed<Versioned<S>> => {
      if (current === undefined) {
        held.push(...appended); // the first look applies them
        return "followed";
      }
      const before = current.version;
      if (!advance(appended)) return "read";
      if (known().version === before) return "followed";
      return predicate(known().state) ? { done: true, value: known() } : "followed";
    };
    return this.until(`actor ${address}`, { keys: [address], follow }, options, async () => {
      if (current === undefined) {
        const { state, version } = await recover(
          journal,
          definition,
          address,
          parseAddress(address).id,
          runtime.logger,
          this.snapshotMetrics,
        );
        current = { state, version };
        advance([]);
      } else await readTail();
      // A version missing before one this process appended, after the read: that read began
      // before the commit we were handed returned, so one more read sees what came before it.
      if (held.length > 0) await readTail();
      const { state, version } = known();
      if (predicate(state)) return { done: true, value: known() };
      const missing =
        held.length > 0 ? `, with version ${held[0]?.version} heard and the ones before it not found` : "";
      return { done: false, detail: `its state at version ${version} does not satisfy the predicate${missing}` };
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
   * The wait: `look` at the journal until it finds the awaited value, sleeping between looks
   * until a look is asked for (a write of this process touching one of `watch.keys` that the wait
   * does not follow, every write for `"all"`; another process's outbox wake-up; a followed commit
   * that cannot be applied) or the poll interval passes with no followed commit. A followed commit
   * (`watch.follow`) is answered in its own turn: it may settle the wait there and then, even with
   * a look in flight, whose answer is then dropped. Stopping the owner, the caller's signal and a
   * followed commit end a wait at once; the timeout ends it after a last look.
   */
  until<T>(awaited: string, watch: Watch<T>, options: WaitOptions, look: () => Promise<Check<T>>): Promise<T> {
    const { signal, clock, stopped } = this.options;
    let timeoutMs: number;
    try {
      timeoutMs = positiveMs("timeoutMs", options.timeoutMs ?? AWAIT_DEFAULTS.timeoutMs);
    } catch (error) {
      return Promise.reject(error);
    }
    if (stopped?.aborted) return Promise.reject(new HostStoppedError(awaited));
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise<T>((resolve, reject) => {
      const deadline = clock.now() + timeoutMs;
      let ended = false;
      // A look was asked for since the last one began: the poll, when no other thing asks, is the only other look.
      let asked = false;
      // When a followed commit last moved the wait on (clock time): the poll counts silence from there.
      let followedAt = Number.NEGATIVE_INFINITY;
      let wakeNap: (() => void) | undefined;
      const offs: (() => void)[] = [];
      const end = (settle: () => void) => {
        if (ended) return;
        ended = true;
        for (const off of offs) off();
        wakeNap?.();
        settle();
      };
      const ask = () => {
        asked = true;
        wakeNap?.();
      };
      const { follow } = watch;
      const onWrite = (appended?: readonly EventRecord[]) => {
        if (ended) return;
        if (!follow || !appended) return ask();
        // In the commit's continuation: whatever the predicate or `evolve` throws ends this wait, never the commit.
        let answer: Followed<T>;
        try {
          answer = follow(appended);
        } catch (error) {
          return end(() => reject(error));
        }
        if (answer === "read") ask();
        else if (answer === "followed") followedAt = clock.now();
        else {
          const { value } = answer;
          end(() => resolve(value));
        }
      };
      const cancel = () => end(() => reject(stopped?.aborted ? new HostStoppedError(awaited) : options.signal?.reason));
      offs.push(
        ...(watch.keys === "all" ? [signal.watchAll(ask)] : watch.keys.map((key) => signal.watch(key, onWrite))),
        // Only the wake-ups that cannot say what was added (another process's NOTIFY, an update, a
        // reconnect): a row added by this process's commit comes with a write already signalled
        // above. Listening to every outbox wake-up made each commit that adds a row nobody was
        // handed (an integration event for the relay) wake every waiter of the process.
        this.options.journal.onOutbox(ask, []),
        ...[stopped, options.signal].map((abort) => (abort ? onAbort(abort, cancel) : () => {})),
      );
      const run = async () => {
        let pollMs: number = AWAIT_DEFAULTS.pollFirstMs;
        for (;;) {
          asked = false;
          const result = await look();
          if (ended) return;
          if (result.done) return end(() => resolve(result.value));
          if (deadline - clock.now() <= 0) {
            return end(() => reject(new WaitTimeoutError(awaited, timeoutMs, result.detail)));
          }
          // Nap until a look is asked for, or `pollMs` pass with no followed commit (then the poll
          // looks for what no wake-up announces), or the deadline (a last look, then the timeout).
          const quietFrom = clock.now();
          for (;;) {
            const now = clock.now();
            const due = Math.min(Math.max(quietFrom, followedAt) + pollMs, deadline);
            if (asked || ended || due <= now) break;
            const napping = nap(clock, due - now);
            wakeNap = napping.wake;
            await napping.slept;
            wakeNap = undefined;
          }
          if (ended) return;
          // The poll starts again from its first interval after a look was asked for (something may
          // be moving elsewhere) and doubles after an interval of silence. A followed commit leaves
          // it as it is (it tells nothing of other processes) but starts its interval again, so a
          // wait whose actor commits every few tens of ms here is not read between its commits.
          pollMs = asked ? AWAIT_DEFAULTS.pollFirstMs : Math.min(pollMs * 2, AWAIT_DEFAULTS.pollMaxMs);
        }
      };
      run().catch((error: unknown) => end(() => reject(error)));
    });
  }
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
