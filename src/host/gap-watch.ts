import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { Consumer } from "../messaging/consumer.js";

/**
 * A sequenced consumer's gap check every `everyMs` of clock time, run by a host from `start()` to
 * `stop()`, so that a gap open past its timeout is alerted (and its reconciliation hook run) with
 * no call from the application. Unlike `Consumer.watchGaps`, `stop()` waits for a check in
 * progress: its hook may hand events to the consumer and send commands through the runtime, which
 * the host closes right after. A failed check is logged and the next one runs on time.
 */
export class GapWatch {
  private readonly abort = new AbortController();
  private readonly loop: Promise<void>;

  constructor(consumer: Consumer, everyMs: number, clock: Clock, logger: Logger) {
    this.loop = (async () => {
      while (!this.abort.signal.aborted) {
        try {
          await clock.sleep(everyMs, this.abort.signal);
        } catch {
          return; // stopped while sleeping
        }
        try {
          await consumer.checkGaps();
        } catch (error) {
          logger.error({ consumer: consumer.name, err: error }, "gap check failed; the next one runs on time");
        }
      }
    })();
  }

  stop(): Promise<void> {
    this.abort.abort();
    return this.loop;
  }
}
