import type { Clock } from "../core/clock.js";
import { EffectTimeoutError } from "./errors.js";

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
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const call = new AbortController();
  const timer = new AbortController();
  const cleanups: (() => void)[] = [];
  const stopped = new Promise<never>((_, reject) => {
    const onParent = () => {
      call.abort(parent.reason);
      reject(parent.reason ?? new Error("aborted"));
    };
    if (parent.aborted) onParent();
    else {
      parent.addEventListener("abort", onParent, { once: true });
      cleanups.push(() => parent.removeEventListener("abort", onParent));
    }
  });
  const timedOut = clock.sleep(timeoutMs, timer.signal).then(() => {
    const error = new EffectTimeoutError(timeoutMs);
    call.abort(error);
    throw error;
  });
  try {
    return await Promise.race([Promise.resolve().then(() => fn(call.signal)), timedOut, stopped]);
  } finally {
    timer.abort();
    for (const cleanup of cleanups) cleanup();
    timedOut.catch(() => {});
    stopped.catch(() => {});
  }
}
