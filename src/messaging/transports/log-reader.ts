import { CheckpointConflictError } from "../../base/errors.js";
import { type Clock, type Random, SLEEP_CANCELLED } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import { PUBLISHED_READER_SOURCE } from "../../journal/published.js";
import type { ConsumerStateReader, EventStore, PublishedLogReader, PublishedRecord } from "../../journal/types.js";
import { subjectMatches } from "../subjects.js";
import { backoffMs, type DeliveryHandler, type DeliveryOutcome } from "../transport.js";
import type { InProcessFaultKnobs } from "./in-process.js";

/** Misdelivery to inject (tests and the demo), the in-process transport's knobs; choices come from the seeded random. */
export type LogReaderFaults = InProcessFaultKnobs;

/** What a reader uses of the journal: the log, and its position (a checkpoint) read and committed. */
export type LogReaderJournal = PublishedLogReader &
  Pick<ConsumerStateReader, "getCheckpoint"> &
  Pick<EventStore, "commit">;

export interface LogReaderOptions {
  journal: LogReaderJournal;
  consumer: string;
  subjects: string[];
  maxDeliveries: number;
  concurrency: number;
  handler: DeliveryHandler;
  clock: Clock;
  random: Random;
  logger: Logger;
  faults: LogReaderFaults;
  pollMs: number;
  batchSize: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

interface Slot {
  entry: PublishedRecord;
  settled: boolean;
}

/**
 * One consumer's reader of the journal's published log.
 *
 * Its position (a checkpoint under `PUBLISHED_READER_SOURCE`) is a low-water mark: every entry
 * at or below it was settled (acknowledged after the consumer's own commit, or not for this
 * consumer's subjects). Entries are read ahead and handled concurrently; when the oldest ones are
 * settled the position moves past them, in a commit guarded by the position it replaces.
 *
 * Failure window: a crash between a handler's commit and the position commit that covers it
 * delivers that entry again at the next start, together with the other entries that were in
 * flight, and no more: the consumer's inbox, written in the handler's own commit, recognises each
 * of them as handled. Nothing at or below the position is ever delivered again, and nothing above
 * it is skipped, so nothing is lost and nothing is republished on a guess.
 *
 * Several processes reading under one consumer name each deliver what they read (the inboxes
 * absorb the copies); the guarded position commit lets the furthest one win.
 */
export class LogReader {
  /** The stored position (low-water mark). */
  private position = 0;
  /** The furthest position every entry up to which is settled (stored by `flush`). */
  private target = 0;
  /** The highest position read into the window. */
  private readTo = 0;
  private readonly window: Slot[] = [];
  private readonly attempts = new Map<number, number>();
  private inFlight = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private caughtUp = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private wake: (() => void) | undefined;
  private signalled = false;
  private storing: Promise<void> | undefined;
  private readonly deliveries = new Set<Promise<void>>();
  private unsubscribe: (() => void) | undefined;
  /** The loop sleeps with a full window: a settled entry makes room and wakes it. */
  private full = false;

  constructor(private readonly o: LogReaderOptions) {}

  /** Register the reader (so retention keeps what it has not read) and start reading from its position. */
  async start(): Promise<void> {
    this.position = await this.o.journal.getCheckpoint(this.o.consumer, PUBLISHED_READER_SOURCE);
    if (this.position === 0) await this.storePosition(0);
    this.readTo = this.position;
    this.target = this.position;
    this.unsubscribe = this.o.journal.onPublished(() => this.poke());
    this.loop = this.run();
  }

  /** True when everything in the log was read and settled (a test or the demo waits for it). */
  get idle(): boolean {
    return (
      this.caughtUp && this.window.length === 0 && this.inFlight === 0 && !this.storing && this.target === this.position
    );
  }

  /**
   * Entries left for this reader: those read and not settled yet (being handled, waiting for a
   * handler slot or for a redelivery), and those in the log past what it has read, counted up to
   * one page of `batchSize` (a longer backlog reports a part of itself, never 0). An entry for
   * other subjects counts until the reader has passed it.
   */
  async pending(): Promise<number> {
    const unread = await this.o.journal.readPublished(this.readTo, this.o.batchSize);
    // Counted after the read: the loop may have read some of them into its window meanwhile.
    const beyond = unread.filter((entry) => entry.position > this.readTo).length;
    return this.window.filter((slot) => !slot.settled).length + beyond;
  }

  /** Wake the read loop now (after an append in this process). */
  poke(): void {
    this.signalled = true;
    this.caughtUp = false;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.signalled = false;
      let read = 0;
      this.full = this.window.length >= this.o.batchSize;
      if (!this.full) {
        try {
          read = await this.readMore();
        } catch (error) {
          this.o.logger.warn({ consumer: this.o.consumer, err: error }, "reading the published log failed; will retry");
        }
      }
      if (read > 0 || this.signalled) continue;
      this.flush();
      await this.sleep();
    }
  }

  private async readMore(): Promise<number> {
    const room = this.o.batchSize - this.window.length;
    const entries = await this.o.journal.readPublished(this.readTo, room);
    if (entries.length < room) this.caughtUp = true;
    const due: Slot[] = [];
    for (const entry of entries) {
      this.readTo = entry.position;
      const slot: Slot = { entry, settled: false };
      this.window.push(slot);
      if (this.o.subjects.some((p) => subjectMatches(p, entry.subject))) due.push(slot);
      else slot.settled = true;
    }
    // The window bounds what is pending; `concurrency` bounds the handler calls running at once.
    for (const slot of this.shuffled(due)) this.track(this.deliver(slot));
    this.advance();
    return entries.length;
  }

  /** Injected reordering: deliveries started in shuffled windows of `reorderWindow` entries. */
  private shuffled(slots: Slot[]): Slot[] {
    const window = this.o.faults.reorderWindow ?? 0;
    if (window <= 1) return slots;
    const out: Slot[] = [];
    for (let start = 0; start < slots.length; start += window) {
      const chunk = slots.slice(start, start + window);
      for (let i = chunk.length - 1; i > 0; i--) {
        const j = Math.floor(this.o.random.next() * (i + 1));
        [chunk[i], chunk[j]] = [chunk[j] as Slot, chunk[i] as Slot];
      }
      out.push(...chunk);
    }
    return out;
  }

  private track(delivery: Promise<void>): void {
    this.deliveries.add(delivery);
    delivery.finally(() => this.deliveries.delete(delivery));
  }

  /**
   * Deliver until the handler settles the entry (ack or term); a nak waits and delivers again.
   * Left unsettled when the reader stops: the position stays below it and the next reader delivers it.
   */
  private async deliver(slot: Slot): Promise<void> {
    const faults = this.o.faults;
    try {
      for (;;) {
        if (faults.maxDelayMs) await this.o.clock.sleep(Math.floor(this.o.random.next() * faults.maxDelayMs));
        if (this.stopped) return;
        const outcome = await this.attempt(slot.entry);
        if (faults.duplicateRate && this.o.random.next() < faults.duplicateRate) await this.attempt(slot.entry);
        if (outcome === undefined) return;
        if (outcome.kind !== "nak") break;
        // Never dropped: the consumer decides when a message is poison (it dead-letters it and
        // acks); a nak means "not now", e.g. while its journal is unreachable.
        await this.o.clock.sleep(outcome.delayMs, this.abort.signal).catch(() => {});
        if (this.stopped) return;
      }
      slot.settled = true;
      this.attempts.delete(slot.entry.position);
    } finally {
      // A settled entry wakes the loop only when it waits for room: otherwise each settle would
      // cost a read of the log, and the position is stored when the loop next goes idle.
      this.advance();
      if (this.full) this.wake?.();
    }
  }

  /** One handler call, in one of `concurrency` slots; undefined when the reader stopped while waiting for one. */
  private async attempt(entry: PublishedRecord): Promise<DeliveryOutcome | undefined> {
    while (this.inFlight >= this.o.concurrency && !this.stopped) {
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    }
    if (this.stopped) return undefined;
    this.inFlight++;
    try {
      return await this.call(entry);
    } finally {
      this.inFlight--;
      this.slotWaiters.shift()?.();
    }
  }

  private async call(entry: PublishedRecord): Promise<DeliveryOutcome> {
    const attempt = (this.attempts.get(entry.position) ?? 0) + 1;
    this.attempts.set(entry.position, attempt);
    try {
      return await this.o.handler({
        subject: entry.subject,
        body: entry.body,
        messageId: entry.messageId,
        attempt,
        maxDeliveries: this.o.maxDeliveries,
      });
    } catch (error) {
      this.o.logger.warn(
        { consumer: this.o.consumer, position: entry.position, err: error },
        "handler threw; will redeliver",
      );
      return { kind: "nak", delayMs: backoffMs(attempt, this.o.retryBaseMs, this.o.retryMaxMs) };
    }
  }

  /**
   * Move the target past the settled head of the window. The position is stored when the loop
   * goes idle (before it sleeps), or at once when a page's worth has settled since the last store:
   * one position commit per settled entry was most of a reader's writes when entries arrive one
   * at a time (events handed over at commit are published as their commits land). The price is a
   * wider redelivery window after a crash (up to one poll's worth of entries), which the inboxes answer.
   */
  private advance(): void {
    while (this.window[0]?.settled) this.target = (this.window.shift() as Slot).entry.position;
    if (this.target - this.position >= this.o.batchSize) this.flush();
  }

  /**
   * One position commit at a time, to the furthest settled position. A failed one is kept in
   * memory: the next settled entry, the next poll or the stop tries again.
   */
  private flush(): void {
    if (this.storing || this.target <= this.position) return;
    const to = this.target;
    this.storing = this.storePosition(to).then(
      () => {
        this.storing = undefined;
        this.flush();
      },
      (error) => {
        this.storing = undefined;
        this.o.logger.warn({ consumer: this.o.consumer, position: to, err: error }, "storing the log position failed");
      },
    );
  }

  /** The guarded position commit. Another reader under the same name that got further wins. */
  private async storePosition(to: number): Promise<void> {
    for (;;) {
      try {
        await this.o.journal.commit({
          checkpoint: {
            consumer: this.o.consumer,
            source: PUBLISHED_READER_SOURCE,
            version: to,
            expected: this.position,
          },
          now: this.o.clock.now(),
        });
        this.position = to;
        return;
      } catch (error) {
        if (!(error instanceof CheckpointConflictError)) throw error;
        this.position = error.actual;
        if (error.actual >= to) return;
      }
    }
  }

  private sleep(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = new AbortController();
      const done = () => {
        if (this.wake === done) this.wake = undefined;
        timer.abort(SLEEP_CANCELLED);
        resolve();
      };
      this.wake = done;
      if (this.stopped) return done();
      this.o.clock.sleep(this.o.pollMs, timer.signal).then(done, () => {});
    });
  }

  /** Stop reading; wait for the handlers in flight, then store the position they reached. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.abort.abort();
    for (const resolve of this.slotWaiters.splice(0)) resolve();
    this.wake?.();
    await this.loop;
    await Promise.all([...this.deliveries]);
    await this.storing;
    while (this.window[0]?.settled) this.target = (this.window.shift() as Slot).entry.position;
    if (this.target > this.position) await this.storePosition(this.target).catch(() => {});
  }
}
