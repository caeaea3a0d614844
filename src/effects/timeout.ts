import type { Clock } from "../core/clock.js";
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
 * Why the timer's sleep is cancelled when the call settles first: a constant, so that cancelling
 * does not build a DOMException (with its stack) on every call, as `abort()` without a reason does.
 * Nobody sees it: the sleep's rejection is swallowed.
 */
const SETTLED = Symbol("oncely.call-settled");

/**
 * Call `fn` with a signal that aborts when `timeoutMs` of the injected clock pass or `parent`
 * aborts. Resolves or rejects with the first of: fn's answer, the timeout, the parent's abort.
 * A handler that ignores its signal is abandoned, not awaited: its late answer is dropped, which
 * is why a timeout is ambiguous (the provider may still act).
 */
export async function withTimeout<T>(
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
  const cleanups: (() => void)[] = [];
  const stopped = new Promise<never>((_, reject) => {
    const onParent = () => {
      abortCall(parent.reason);
      reject(parent.reason ?? new Error("aborted"));
    };
    if (parent.aborted) onParent();
    else {
      parent.addEventListener("abort", onParent, { once: true });
      cleanups.push(() => parent.removeEventListener("abort", onParent));
    }
  });
  const timedOut = expiry(clock, timeoutMs, cleanups).then(() => {
    const error = new EffectTimeoutError(timeoutMs);
    abortCall(error);
    throw error;
  });
  try {
    return await Promise.race([Promise.resolve().then(() => fn(call)), timedOut, stopped]);
  } finally {
    for (const cleanup of cleanups) cleanup();
    timedOut.catch(() => {});
    stopped.catch(() => {});
  }
}

/**
 * Resolves when `ms` of the clock's time pass; never settles once cancelled (through `cleanups`).
 * A clock with `timer` needs no AbortController; any other is slept with a signal, cancelled with
 * a constant reason (see SETTLED) whose rejection is swallowed.
 */
function expiry(clock: Clock, ms: number, cleanups: (() => void)[]): Promise<void> {
  if (clock.timer) {
    return new Promise<void>((resolve) => {
      cleanups.push((clock.timer as NonNullable<Clock["timer"]>).call(clock, ms, resolve));
    });
  }
  const cancel = new AbortController();
  cleanups.push(() => cancel.abort(SETTLED));
  return clock.sleep(ms, cancel.signal).catch((error: unknown) => {
    if (error === SETTLED) return new Promise<void>(() => {});
    throw error;
  });
}
