import type { Envelope } from "./envelope.js";

/**
 * The durable copy of an event handed over at commit, as the transport will deliver it: the
 * broker's message id (`brokerMessageId` of the signed envelope) and the encoded body.
 */
export interface DurableCopy {
  messageId: string;
  body: string;
}

/**
 * A consumer of this process that takes events handed over at commit (see `EventHandOver`).
 * `handOver` never throws: it resolves true once the event is handled (applied, a duplicate, or
 * passed over), false when it was not (a failure, a version parked behind a gap), in which case
 * the durable copy is handled as any delivery.
 */
export interface HandOverTarget {
  readonly name: string;
  handOver(envelope: Envelope, copy: DurableCopy): Promise<boolean>;
  /**
   * Announce a copy before the commit that makes it durable (an event its commit appends to the
   * journal's published log): a copy read before the hand-over waits for it. Call what it returns
   * once, with the envelope when the commit landed (then it is handed over), or with nothing when
   * the commit failed (a copy that exists after all takes the full path).
   */
  expectHandOver?(copy: DurableCopy): (envelope: Envelope | undefined) => void;
}

/**
 * Handed-over events a consumer handles at once; past it, an event is left to its durable copy,
 * whose transport bounds its handling (`SubscribeOptions.concurrency`). Without a bound, a burst
 * of commits starts as many handlings at once, and on a starved machine leases run out under them.
 */
export const HAND_OVER_CONCURRENCY = 64;

/** Default bound of the copies a consumer remembers (oldest forgotten first). */
export const HANDED_OVER_MEMORY = 10_000;

/**
 * What a consumer handed over at commit, until its durable copy arrives: the copy (same message
 * id, same body) is then settled from memory, with no decode, no signature check and no journal
 * read, once the handed-over handling has settled. A copy that differs in anything, arrives after
 * the entry was forgotten, or follows a handling that failed, takes the full path, where the
 * inbox answers it. Bounded: with a shared broker durable, another worker may take the copy, and
 * its entry here is then forgotten when newer ones push it out.
 */
export class HandedOverCopies {
  private readonly entries = new Map<string, { body: string; handled: Promise<boolean> }>();

  constructor(private readonly limit = HANDED_OVER_MEMORY) {}

  /**
   * Remember a copy whose handling is not started yet: what it returns starts it (or, given false,
   * lets a copy that arrives take the full path). A copy taken meanwhile waits for that.
   */
  expect(copy: DurableCopy): (handled: Promise<boolean>) => void {
    let settle: (handled: Promise<boolean>) => void = () => {};
    this.remember(
      copy,
      new Promise<boolean>((resolve) => {
        settle = resolve;
      }),
    );
    return settle;
  }

  remember(copy: DurableCopy, handled: Promise<boolean>): void {
    if (this.entries.size >= this.limit) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(copy.messageId, { body: copy.body, handled });
  }

  /**
   * The handed-over handling of this exact copy (forgotten once asked: a redelivery of the copy
   * takes the full path), or undefined when this process handed over no such message.
   */
  take(messageId: string | undefined, body: string): Promise<boolean> | undefined {
    if (messageId === undefined) return undefined;
    const entry = this.entries.get(messageId);
    if (!entry || entry.body !== body) return undefined;
    this.entries.delete(messageId);
    return entry.handled;
  }

  get size(): number {
    return this.entries.size;
  }
}
