import { consumeSpan } from "../observability/messaging-spans.js";
import type { ConsumerContext } from "./consumer-context.js";
import type { Envelope } from "./envelope.js";
import { type DurableCopy, HAND_OVER_CONCURRENCY, HandedOverCopies } from "./handed-over.js";
import type { HandleResult } from "./handlers.js";
import type { Delivery } from "./transport.js";

/**
 * A consumer's intake of events handed over at commit by this process's relay (see
 * `EventHandOver`), before and beside their durable copies: at most `HAND_OVER_CONCURRENCY`
 * handlings at once, and the memory of what was handed over, so that each durable copy is
 * settled by that handling (`take`) rather than handled again.
 */
export class HandOverIntake {
  /** Events handed over at commit whose durable copy has not arrived yet (see `handOver`). */
  private readonly copies = new HandedOverCopies();
  /** Handed-over events being handled now (at most `HAND_OVER_CONCURRENCY`). */
  private handingOver = 0;

  constructor(
    private readonly c: ConsumerContext,
    /** The consumer's handling of a parsed envelope (collection claim, mode, counts). */
    private readonly handleParsed: (envelope: Envelope) => Promise<HandleResult>,
  ) {}

  /** Remember a copy before the commit that makes it durable; what it returns starts its handling. */
  expect(copy: DurableCopy): (handled: Promise<boolean>) => void {
    return this.copies.expect(copy);
  }

  /**
   * The handed-over handling of this delivery's exact copy (forgotten once asked), or undefined
   * when this process handed over no such message: then the delivery takes the full path.
   */
  take(delivery: Delivery): Promise<boolean> | undefined {
    return this.copies.take(delivery.messageId, delivery.body);
  }

  /**
   * Handle an event handed over at commit. The envelope never left the process (it comes from
   * this process's own commit), so it is not verified here; the copy the transport delivers is the
   * signed one. Resolves true once handled (applied, a duplicate or passed over), false otherwise:
   * a failure is counted (`stats.handOverFailures`, outcome `hand-over-failed`), logged at debug and
   * left to the durable copy, which gets the retries, the dead letter and the counts of any
   * delivery; a sequenced version parked behind a gap is released by its predecessor as usual.
   * Never throws.
   *
   * The durable copy (same message id, same body) is then settled from memory once this handling
   * has: no journal read for it, and never two handlings of one event at once in this process.
   * Past `HAND_OVER_CONCURRENCY` handlings at once, an event is declined (resolves false, counted
   * as `hand-over-declined`) and its durable copy handled as any delivery.
   */
  handOver(envelope: Envelope, copy: DurableCopy): Promise<boolean> {
    const c = this.c;
    if (this.handingOver >= HAND_OVER_CONCURRENCY) {
      c.metrics.handled.inc({ consumer: c.name, outcome: "hand-over-declined" });
      return Promise.resolve(false);
    }
    this.handingOver++;
    const handled = consumeSpan(
      c.name,
      envelope,
      c.metrics,
      () => c.clock.now(),
      () => this.handleParsed(envelope),
    ).then(
      (result) => {
        c.counts.handedOver.inc();
        return result.outcome !== "parked";
      },
      (error: unknown) => {
        // Counted and logged; the warnings, retries and dead letter are the durable copy's.
        c.counts.handOverFailures.inc();
        c.logger.debug(
          { consumer: c.name, eventId: envelope.eventId, err: error },
          "handed-over event not handled; its durable copy will be",
        );
        return false;
      },
    );
    void handled.finally(() => this.handingOver--);
    this.copies.remember(copy, handled);
    return handled;
  }
}
