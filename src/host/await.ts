import { AWAIT_DEFAULTS, positiveMs } from "../base/defaults.js";
import { InvalidInputError } from "../base/errors.js";
import type { ActorDefinition } from "../core/actor.js";
import { parseAddress } from "../core/address.js";
import { type Clock, SLEEP_CANCELLED } from "../core/clock.js";
import type { Typed } from "../core/decider.js";
import { recover } from "../core/recovery.js";
import type { Runtime } from "../core/runtime.js";
import type { EffectView } from "../effects/types.js";
import { getEffect } from "../effects/view.js";
import type { EventReader, OutboxReader, OutboxStore } from "../journal/types.js";
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
}

/**
 * Waits for results without a busy loop. A waiter looks at the journal once, then sleeps until
 * one of: a write of this process touched what it waits for (`CommitSignal`), the journal's
 * outbox wake-up fired (on PostgreSQL a NOTIFY from any process), or its poll interval passed
 * (doubling from `pollFirstMs` to `pollMaxMs`, reset by every wake-up). The poll is what
 * catches another process's commit that sends no NOTIFY (an outcome, an event-only commit), so
 * across processes a result is seen at most `pollMaxMs` late.
 */
export class Awaiter {
  constructor(private readonly options: AwaiterOptions) {}

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
    return this.until(`actor ${address}`, [address], options, async () => {
      if (!current) {
        const { state, version } = await recover(
          journal,
          definition,
          address,
          parseAddress(address).id,
          runtime.logger,
        );
        current = { state, version };
      } else {
        // One read per look: the events since the last one, usually none.
        for (const record of await journal.readStream(address, current.version + 1)) {
          current = { state: definition.evolve(current.state, record.data as Typed), version: record.version };
        }
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
    return this.until(`effect ${key}`, [key], options, async () => {
      const view = await getEffect(journal, key);
      if (view.status === "Completed" || view.status === "Failed") return { done: true, value: view as SettledEffect };
      if (view.status === "NotRequested") return { done: false, detail: "no effect with this key has been requested" };
      const lastError = "lastError" in view && view.lastError ? `, last error: ${view.lastError}` : "";
      return { done: false, detail: `it is ${view.status} after ${view.attempts} attempt(s)${lastError}` };
    });
  }

  /**
   * The wait loop: `check` until done, sleeping between looks until a wake-up (a write touching
   * one of `keys`, every write for `"all"`), the outbox signal, or the poll interval.
   */
  async until<T>(
    awaited: string,
    keys: string[] | "all",
    options: WaitOptions,
    check: () => Promise<Check<T>>,
  ): Promise<T> {
    const { signal, clock, stopped, journal } = this.options;
    const timeoutMs = positiveMs("timeoutMs", options.timeoutMs ?? AWAIT_DEFAULTS.timeoutMs);
    const deadline = clock.now() + timeoutMs;
    let woken = false;
    let sleeper = new AbortController();
    const nudge = () => {
      woken = true;
      sleeper.abort(SLEEP_CANCELLED);
    };
    const cancel = () => sleeper.abort(SLEEP_CANCELLED);
    const unsubscribe = [
      ...(keys === "all" ? [signal.watchAll(nudge)] : keys.map((key) => signal.watch(key, nudge))),
      journal.onOutbox(nudge),
    ];
    const unlisten = [stopped, options.signal].map((abort) => (abort ? onAbort(abort, cancel) : () => {}));
    let pollMs: number = AWAIT_DEFAULTS.pollFirstMs;
    try {
      for (;;) {
        if (stopped?.aborted) throw new HostStoppedError(awaited);
        options.signal?.throwIfAborted();
        woken = false;
        const result = await check();
        if (result.done) return result.value;
        const left = deadline - clock.now();
        if (left <= 0) throw new WaitTimeoutError(awaited, timeoutMs, result.detail);
        if (!woken) {
          sleeper = new AbortController();
          await clock.sleep(Math.min(pollMs, left), sleeper.signal).catch(() => {});
        }
        pollMs = woken ? AWAIT_DEFAULTS.pollFirstMs : Math.min(pollMs * 2, AWAIT_DEFAULTS.pollMaxMs);
      }
    } finally {
      for (const off of [...unsubscribe, ...unlisten]) off();
    }
  }
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
