import type { Clock } from "./clock.js";
import type { Logger } from "./logger.js";

/**
 * Warnings that one condition can raise per message (a peer down: one per command sent to it), said
 * once per `intervalMs` per key instead: the first at once, the rest counted and reported with the
 * next one said (`suppressed`, how many were not logged since). Nothing is hidden: the metric of the
 * condition still counts each one, and the log says how many it left out. A key quiet for
 * `intervalMs` starts over, so a new outage is warned at once.
 */
export class WarnThrottle {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Pick<Clock, "now">,
    private readonly intervalMs: number,
  ) {}

  warn(key: string, fields: object, message: string): void {
    const now = this.clock.now();
    const seen = this.last.get(key);
    if (seen !== undefined && now - seen.at < this.intervalMs) {
      seen.suppressed++;
      return;
    }
    const suppressed = seen?.suppressed ?? 0;
    this.last.set(key, { at: now, suppressed: 0 });
    this.logger.warn(suppressed > 0 ? { ...fields, suppressed } : fields, message);
    // Keys of old outages are dropped once quiet, so the map holds only what warned lately.
    if (this.last.size > 1_000) {
      for (const [k, v] of this.last) if (now - v.at >= this.intervalMs && v.suppressed === 0) this.last.delete(k);
    }
  }
}
