import { type Clock, SLEEP_CANCELLED } from "../core/clock.js";
import { EffectTimeoutError } from "./errors.js";

/**
 * The call's abort signal, made on first read: most handlers never read it, and an AbortController
 * per call (plus the abort event it dispatches) is a measurable share of a short handler's cost.
 * A signal first read after the call was aborted is born aborted, with the same reason.
 */
export interface CallSignal {
  readonly signal: AbortSignal;
}

/**
 * Call `fn` with a signal that aborts when `timeoutMs` of the injected clock pass or `parent`
 * aborts. Resolves or rejects with the first of: fn's answer, the timeout, the parent's abort.
 * A handler that ignores its signal is abandoned, not awaited: its late answer is dropped, which
 * is why a timeout is ambiguous (the provider may still act).
 *
 * One promise, settled by whichever comes first, instead of a race of three: this runs on every
 * effect call, and the race's promises, closures and an abort listener per call on the shared
 * parent signal were a fifteenth of what the order workflow's process allocated.
 */
export function withTimeout<T>(
  clock: Clock,
  timeoutMs: number,
  parent: AbortSignal,
  fn: (call: CallSignal) => Promise<T>,
): Promise<T> {
  let controller: AbortController | undefined;
  let aborted: { reason: unknown } | undefined;
  const abortCall = (reason: unknown) => {
    aborted ??= { reason };
    controller?.abort(reason);
  };
  const call: CallSignal = {
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (aborted) controller.abort(aborted.reason);
      }
      return controller.signal;
    },
  };
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let stopTimer: (() => void) | undefined;
    let stopParent: (() => void) | undefined;
    /** True for the first of the three to come; it stops the other two. */
    const first = (): boolean => {
      if (settled) return false;
      settled = true;
      stopTimer?.();
      stopParent?.();
      return true;
    };
    const fail = (error: unknown) => {
      if (first()) reject(error);
    };
    const onParent = () => {
      abortCall(parent.reason);
      fail(parent.reason ?? new Error("aborted"));
    };
    if (parent.aborted) onParent();
    else stopParent = onAbort(parent, onParent);
    if (!settled) {
      stopTimer = startTimer(
        clock,
        timeoutMs,
        () => {
          const error = new EffectTimeoutError(timeoutMs);
          abortCall(error);
          fail(error);
        },
        fail,
      );
    }
    // Called even when the parent was aborted already (with its signal aborted), as it always was.
    Promise.resolve()
      .then(() => fn(call))
      .then((value) => {
        if (first()) resolve(value);
      }, fail);
  });
}

/**
 * Calls `expire` when `ms` of the clock's time pass, unless the returned cancel is called first.
 * A clock with `timer` needs no AbortController; any other is slept with a signal, cancelled with
 * a constant reason (SLEEP_CANCELLED) whose rejection is swallowed; any other rejection of its sleep
 * (a clock that failed) goes to `failed`.
 */
function startTimer(clock: Clock, ms: number, expire: () => void, failed: (error: unknown) => void): () => void {
  if (clock.timer) return clock.timer(ms, expire);
  const cancel = new AbortController();
  clock.sleep(ms, cancel.signal).then(expire, (error: unknown) => {
    if (error !== SLEEP_CANCELLED) failed(error);
  });
  return () => cancel.abort(SLEEP_CANCELLED);
}

/**
 * The listeners of each parent signal, behind ONE listener of its own: every call of a dispatcher
 * shares its stop signal, and an EventTarget listener added and removed per call cost more than
 * the call's own bookkeeping. Weak: a signal no longer referenced takes its set with it.
 */
const abortListeners = new WeakMap<AbortSignal, Set<() => void>>();

/** Runs `listener` once when `signal` aborts (it has not yet); the returned function removes it. */
function onAbort(signal: AbortSignal, listener: () => void): () => void {
  let listeners = abortListeners.get(signal);
  if (listeners === undefined) {
    const set = new Set<() => void>();
    listeners = set;
    abortListeners.set(signal, set);
    signal.addEventListener(
      "abort",
      () => {
        abortListeners.delete(signal);
        for (const each of [...set]) each();
      },
      { once: true },
    );
  }
  const own = listeners;
  own.add(listener);
  return () => {
    own.delete(listener);
  };
}
