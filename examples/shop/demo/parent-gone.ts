import type { Readable } from "node:stream";

/**
 * A demo worker's way to notice that its parent died: the parent holds the write end of the
 * worker's stdin and never writes, so the stream ends only when the parent is gone (killed, or
 * a test that timed out). Without this the worker, re-parented to init, kept its port, its
 * PostgreSQL connections and a core busy for the rest of the test suite. `onGone` runs once: a
 * clean stop; `forceAfterMs` later the process exits anyway, in case the stop hangs on a journal
 * it can no longer reach.
 */
export function whenParentGone(
  stdin: Readable,
  onGone: () => void,
  exit: (code: number) => void,
  forceAfterMs = 10_000,
): void {
  let gone = false;
  const fire = () => {
    if (gone) return;
    gone = true;
    setTimeout(() => exit(1), forceAfterMs).unref();
    onGone();
  };
  stdin.once("end", fire);
  stdin.once("close", fire);
  stdin.once("error", fire);
  stdin.resume();
}
