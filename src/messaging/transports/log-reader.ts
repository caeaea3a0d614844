import { CheckpointConflictError } from "../../base/errors.js";
import { type Clock, type Random, SLEEP_CANCELLED } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import { type Ownership, splitsBySlice } from "../../core/slices.js";
import { PUBLISHED_READER_SOURCE, publishedSliceSource } from "../../journal/published.js";
import type {
  CheckpointWrite,
  ConsumerStateReader,
  EventStore,
  PublishedLogReader,
  PublishedRecord,
} from "../../journal/types.js";
import type { SliceReaderMetrics } from "../slice-metrics.js";
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
  /**
   * The slices this worker owns: the reader reads only their entries, with a position per slice
   * (see the class comment). Absent, or `ownsEverything`: one position over the whole log.
   */
  ownership?: Ownership | undefined;
  metrics?: SliceReaderMetrics | undefined;
}

/**
 * A run of the log read with one position: the whole log (`slice` undefined), or one slice of it.
 * `position` is a low-water mark: every entry of the lane at or below it is settled; `stored` is
 * the version of its checkpoint, which the next store expects.
 */
interface Lane {
  slice: number | undefined;
  source: string;
  stored: number;
  position: number;
  /** Every entry of the lane up to here was read into the window (or passed over). */
  readTo: number;
  /** Every entry of the lane up to here is settled (stored by `flush`). */
  target: number;
  window: Slot[];
  /** An entry of this lane settled since its last store. */
  dirty: boolean;
  /** Stopped: its slice is no longer owned. Nothing of it is delivered, settled or stored after its last store. */
  lost: boolean;
  readonly abort: AbortController;
  readonly deliveries: Set<Promise<void>>;
}

interface Slot {
  entry: PublishedRecord;
  lane: Lane;
  settled: boolean;
  /** Its delivery gave up (its slice was let go) while the lane was still read: redelivered if the slice stays. */
  orphan?: boolean;
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
 *
 * **With an ownership** (a worker among several, docs/design/event-partitions.md) the reader reads
 * only the entries of the slices it owns (`readPublished(after, limit, slices)`), and keeps one
 * position per slice (`publishedSliceSource(slice)`; its position in a slice is the larger of
 * that checkpoint and its whole-log one, which it keeps as its registration for retention). When a
 * slice is gained it starts from the slice's stored position: where the previous owner's last
 * store left it. When a slice is lost (`onChange`, and the ownership's `settleWith` before the
 * lease is let go) it stops delivering the slice's entries, waits for the handler calls running,
 * stores the slice's low-water mark and forgets the slice: an entry that was read and not settled
 * (waiting for a retry, or for a handler slot) is not acknowledged past its position, so the next
 * owner delivers it again (the inbox answers what was handled). A slice's position is stored when
 * an entry of it settled, or once it lags the read by a page (`batchSize`), and when it is lost.
 */
export class LogReader {
  private readonly lanes = new Map<number | undefined, Lane>();
  private readonly sliced: Ownership | undefined;
  /** Entries in all lanes' windows. */
  private windowed = 0;
  private inFlight = 0;
  /** Deliveries waiting for a handler slot, first come first served: a freed slot is handed to the first. */
  private readonly slotWaiters: { lane: Lane; resolve: (granted: boolean) => void }[] = [];
  private caughtUp = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private signalled = false;
  private storing: Promise<void> | undefined;
  /** The last store, which the next one waits for: one position commit at a time. */
  private stores: Promise<void> = Promise.resolve();
  /** Per slice, the gain or loss under way (one at a time per slice). */
  private readonly transitions = new Map<number, Promise<void>>();
  private readonly unsubscribes: (() => void)[] = [];
  /** The loop sleeps with a full window: a settled entry makes room and wakes it. */
  private full = false;

  constructor(private readonly o: LogReaderOptions) {
    this.sliced = splitsBySlice(o.ownership) ? o.ownership : undefined;
  }

  /** Register the reader (so retention keeps what it has not read) and start reading from its position. */
  async start(): Promise<void> {
    const floor = await this.register();
    const ownership = this.sliced;
    if (!ownership) {
      this.lanes.set(undefined, this.lane(undefined, PUBLISHED_READER_SOURCE, floor, floor));
    } else {
      const owned: number[] = [];
      for (let slice = 0; slice < ownership.sliceCount; slice++) if (ownership.owns(slice)) owned.push(slice);
      for (const lane of await Promise.all(owned.map((slice) => this.openSlice(slice, floor)))) {
        this.lanes.set(lane.slice, lane);
      }
      this.unsubscribes.push(ownership.onChange(() => this.reconcile()));
      const unregister = ownership.settleWith?.((slice) => this.sync(slice));
      if (unregister) this.unsubscribes.push(unregister);
    }
    this.unsubscribes.push(this.o.journal.onPublished(() => this.poke()));
    this.loop = this.run();
  }

  /** The whole-log position, created at 0 when absent (the reader's registration for retention). */
  private async register(): Promise<number> {
    const position = await this.o.journal.getCheckpoint(this.o.consumer, PUBLISHED_READER_SOURCE);
    if (position === 0) await this.commitPositions([{ source: PUBLISHED_READER_SOURCE, version: 0, expected: 0 }]);
    return position;
  }

  private lane(slice: number | undefined, source: string, stored: number, position: number): Lane {
    return {
      slice,
      source,
      stored,
      position,
      readTo: position,
      target: position,
      window: [],
      dirty: false,
      lost: false,
      abort: new AbortController(),
      deliveries: new Set(),
    };
  }

  /** A slice's lane, from its stored position (or the whole-log one, when that is further). */
  private async openSlice(slice: number, floor: number): Promise<Lane> {
    const source = publishedSliceSource(slice);
    const stored = await this.o.journal.getCheckpoint(this.o.consumer, source);
    return this.lane(slice, source, stored, Math.max(stored, floor));
  }

  /** True when everything in the log was read and settled (a test or the demo waits for it). */
  get idle(): boolean {
    return (
      this.caughtUp &&
      this.windowed === 0 &&
      this.inFlight === 0 &&
      !this.storing &&
      this.transitions.size === 0 &&
      ![...this.lanes.values()].some((lane) => this.due(lane))
    );
  }

  /**
   * Entries left for this reader: those read and not settled yet (being handled, waiting for a
   * handler slot or for a redelivery), and those in the log past what it has read, counted up to
   * one page of `batchSize` (a longer backlog reports a part of itself, never 0). An entry for
   * other subjects counts until the reader has passed it. With an ownership: of its slices only.
   */
  async pending(): Promise<number> {
    const lanes = this.active();
    if (lanes.length === 0) return this.unsettled();
    const after = Math.min(...lanes.map((lane) => lane.readTo));
    const unread = await this.read(after, this.o.batchSize, lanes);
    // Counted after the read: the loop may have read some of them into its window meanwhile.
    const beyond = unread.filter((entry) => {
      const lane = this.laneOf(entry);
      return lane !== undefined && entry.position > lane.readTo;
    }).length;
    return this.unsettled() + beyond;
  }

  private unsettled(): number {
    let count = 0;
    for (const lane of this.lanes.values()) count += lane.window.filter((slot) => !slot.settled).length;
    return count;
  }

  /** Wake the read loop now (after an append in this process). */
  poke(): void {
    this.signalled = true;
    this.caughtUp = false;
    this.wake?.();
  }

  private active(): Lane[] {
    return [...this.lanes.values()].filter((lane) => !lane.lost);
  }

  private laneOf(entry: PublishedRecord): Lane | undefined {
    const lane = this.lanes.get(this.sliced ? entry.slice : undefined);
    return lane && !lane.lost ? lane : undefined;
  }

  private read(after: number, limit: number, lanes: readonly Lane[]): Promise<PublishedRecord[]> {
    return this.sliced
      ? this.o.journal.readPublished(
          after,
          limit,
          lanes.map((lane) => lane.slice as number),
        )
      : this.o.journal.readPublished(after, limit);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.signalled = false;
      let read = 0;
      this.full = this.windowed >= this.o.batchSize;
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
    const lanes = this.active();
    if (lanes.length === 0) {
      this.caughtUp = true;
      return 0;
    }
    const room = this.o.batchSize - this.windowed;
    // One read for every owned slice, from the one furthest behind (a slice just gained): entries
    // of the others that were read already are passed over below.
    const after = Math.min(...lanes.map((lane) => lane.readTo));
    const entries = await this.read(after, room, lanes);
    if (entries.length < room) this.caughtUp = true;
    const due: Slot[] = [];
    for (const entry of entries) {
      const lane = this.laneOf(entry);
      if (!lane || entry.position <= lane.readTo) continue;
      const slot: Slot = { entry, lane, settled: false };
      lane.window.push(slot);
      this.windowed++;
      if (this.sliced)
        this.o.metrics?.read.inc({ transport: "journal", consumer: this.o.consumer, slice: entry.slice });
      if (this.o.subjects.some((p) => subjectMatches(p, entry.subject))) due.push(slot);
      else slot.settled = true;
    }
    // The read covered every asked slice up to its last entry: a slice with nothing there moves too.
    const last = entries.at(-1)?.position;
    if (last !== undefined) for (const lane of lanes) if (!lane.lost) lane.readTo = Math.max(lane.readTo, last);
    // The window bounds what is pending; `concurrency` bounds the handler calls running at once.
    for (const slot of this.shuffled(due)) this.track(slot.lane, this.deliver(slot));
    for (const lane of lanes) this.advance(lane);
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

  private track(lane: Lane, delivery: Promise<void>): void {
    lane.deliveries.add(delivery);
    delivery.finally(() => lane.deliveries.delete(delivery));
  }

  /**
   * Deliver until the handler settles the entry (ack or term); a nak waits and delivers again.
   * Left unsettled when the reader stops or loses the entry's slice: the position stays below it
   * and the next reader delivers it.
   */
  private async deliver(slot: Slot): Promise<void> {
    const faults = this.o.faults;
    const lane = slot.lane;
    try {
      for (;;) {
        if (faults.maxDelayMs) await this.o.clock.sleep(Math.floor(this.o.random.next() * faults.maxDelayMs));
        if (this.stopped || this.gone(lane)) return;
        const outcome = await this.attempt(slot);
        if (faults.duplicateRate && this.o.random.next() < faults.duplicateRate) await this.attempt(slot);
        if (outcome === undefined) return;
        if (outcome.kind !== "nak") break;
        // Never dropped: the consumer decides when a message is poison (it dead-letters it and
        // acks); a nak means "not now", e.g. while its journal is unreachable.
        await this.o.clock.sleep(outcome.delayMs, lane.abort.signal).catch(() => {});
        if (this.stopped || this.gone(lane)) return;
      }
      // Settled even when the slice was lost meanwhile: the lost lane waits for the calls running
      // before it stores its last position, so this one counts there.
      slot.settled = true;
      this.attempts.delete(slot.entry.position);
    } finally {
      // A settled entry wakes the loop only when it waits for room: otherwise each settle would
      // cost a read of the log, and the position is stored when the loop next goes idle.
      if (!slot.settled && !lane.lost && !this.stopped) slot.orphan = true;
      if (!lane.lost) this.advance(lane);
      if (this.full) this.wake?.();
    }
  }

  private readonly attempts = new Map<number, number>();

  /** A lane whose slice is not owned now (lost, or about to be). */
  private gone(lane: Lane): boolean {
    return lane.lost || (lane.slice !== undefined && this.sliced?.owns(lane.slice) === false);
  }

  /** One handler call, in one of `concurrency` slots; undefined when the reader stopped (or lost the slice) while waiting for one. */
  private async attempt(slot: Slot): Promise<DeliveryOutcome | undefined> {
    if (this.stopped || this.gone(slot.lane)) return undefined;
    // Handed over in arrival order, so that with `concurrency` 1 entries are handled in log order.
    if (this.inFlight < this.o.concurrency && this.slotWaiters.length === 0) this.inFlight++;
    else if (!(await new Promise<boolean>((resolve) => this.slotWaiters.push({ lane: slot.lane, resolve })))) {
      return undefined;
    }
    try {
      // Asked of the ownership itself, not only of the lane: a slice let go a moment ago is not
      // handled here, even before the reader has heard of it.
      if (this.stopped || this.gone(slot.lane)) return undefined;
      return await this.call(slot.entry);
    } finally {
      const next = this.slotWaiters.shift();
      if (next) next.resolve(true);
      else this.inFlight--;
    }
  }

  /** Wake the deliveries waiting for a slot (of one lane, or all) with no slot: they return unsettled. */
  private refuseWaiters(lane?: Lane): void {
    for (let i = this.slotWaiters.length - 1; i >= 0; i--) {
      const waiter = this.slotWaiters[i] as (typeof this.slotWaiters)[number];
      if (lane && waiter.lane !== lane) continue;
      this.slotWaiters.splice(i, 1);
      waiter.resolve(false);
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
   * Move a lane's target past its settled head. Its position is stored when the loop goes idle
   * (before it sleeps), or at once when a page's worth has settled since the last store: one
   * position commit per settled entry was most of a reader's writes when entries arrive one at a
   * time (events handed over at commit are published as their commits land). The price is a wider
   * redelivery window after a crash (up to one poll's worth of entries), which the inboxes answer.
   */
  private advance(lane: Lane): void {
    while (lane.window[0]?.settled) {
      lane.window.shift();
      this.windowed--;
      lane.dirty = true;
    }
    const head = lane.window[0];
    // Positions between the last settled entry and the first unsettled one are other slices' or
    // none at all, so the lane has passed them.
    const target = head ? head.entry.position - 1 : lane.readTo;
    if (target > lane.target) lane.target = target;
    if (lane.target - lane.position >= this.o.batchSize) this.flush();
  }

  /**
   * Whether a lane's position is to be stored now: the whole log's whenever it moved; a slice's
   * when an entry of it settled since (`dirty`) or when it lags its target by a page, so that an
   * owner's many quiet slices do not each cost a checkpoint at every store.
   */
  private due(lane: Lane): boolean {
    if (lane.lost || lane.target <= lane.position) return false;
    return lane.slice === undefined || lane.dirty || lane.target - lane.position >= this.o.batchSize;
  }

  /**
   * One position commit at a time, for every lane due. A failed one is kept in memory: the next
   * settled entry, the next poll or the stop tries again.
   */
  private flush(): void {
    if (this.storing) return;
    const lanes = [...this.lanes.values()].filter((lane) => this.due(lane));
    if (lanes.length === 0) return;
    this.storing = this.store(lanes).then(
      () => {
        this.storing = undefined;
        this.flush();
      },
      (error) => {
        this.storing = undefined;
        this.o.logger.warn({ consumer: this.o.consumer, err: error }, "storing the log position failed");
      },
    );
  }

  /** Store the lanes' targets, after any store under way. */
  private store(lanes: readonly Lane[]): Promise<void> {
    const next = this.stores.then(() => this.storeNow(lanes));
    this.stores = next.catch(() => {});
    return next;
  }

  /**
   * The guarded position commit of some lanes (one checkpoint each). Another reader under the same
   * name that got further in a lane wins that lane; the others are committed again without it.
   */
  private async storeNow(lanes: readonly Lane[]): Promise<void> {
    let writes = lanes
      .filter((lane) => lane.target > lane.stored)
      .map((lane) => ({ lane, version: lane.target, expected: lane.stored }));
    while (writes.length > 0) {
      try {
        await this.commitPositions(
          writes.map(({ lane, version, expected }) => ({ source: lane.source, version, expected })),
        );
        for (const { lane, version } of writes) this.stored(lane, version);
        return;
      } catch (error) {
        if (!(error instanceof CheckpointConflictError)) throw error;
        const refused = writes.find((w) => w.lane.source === error.source);
        if (!refused) throw error;
        this.stored(refused.lane, error.actual);
        writes = writes
          .filter((w) => w.version > w.lane.stored)
          .map((w) => ({ lane: w.lane, version: w.version, expected: w.lane.stored }));
      }
    }
  }

  private stored(lane: Lane, version: number): void {
    lane.stored = version;
    if (version > lane.position) lane.position = version;
    if (lane.target <= lane.position) lane.dirty = false;
  }

  private commitPositions(writes: readonly Omit<CheckpointWrite, "consumer">[]): Promise<unknown> {
    return this.o.journal.commit({
      checkpoints: writes.map((w) => ({ consumer: this.o.consumer, ...w })),
      now: this.o.clock.now(),
    });
  }

  /** Ownership changed: gain the slices now owned, let go of those no longer owned. */
  private reconcile(): void {
    const ownership = this.sliced;
    if (!ownership || this.stopped) return;
    for (let slice = 0; slice < ownership.sliceCount; slice++) {
      const lane = this.lanes.get(slice);
      const orphans = lane?.window.some((slot) => slot.orphan) === true;
      if (ownership.owns(slice) !== (lane !== undefined && !lane.lost) || orphans) void this.sync(slice);
    }
  }

  /**
   * Bring one slice's lane in line with the ownership, after any change of it under way. Also the
   * ownership's `settleWith` hook: the lease of a slice let go is released once this resolved, so
   * the next owner starts from the position stored here.
   */
  private sync(slice: number): Promise<void> {
    const previous = this.transitions.get(slice) ?? Promise.resolve();
    const next = previous
      .then(async () => {
        const owns = !this.stopped && this.sliced?.owns(slice) === true;
        const lane = this.lanes.get(slice);
        if (owns && !lane) await this.gain(slice);
        else if (!owns && lane && !this.stopped) await this.lose(lane);
        else if (owns && lane) this.redeliverOrphans(lane);
      })
      .catch((error) => this.o.logger.warn({ consumer: this.o.consumer, slice, err: error }, "moving a slice failed"))
      .finally(() => {
        if (this.transitions.get(slice) === next) this.transitions.delete(slice);
      });
    this.transitions.set(slice, next);
    return next;
  }

  /** The slice was let go and taken back before the reader heard: deliver what gave up meanwhile. */
  private redeliverOrphans(lane: Lane): void {
    for (const slot of lane.window) {
      if (!slot.orphan || slot.settled) continue;
      slot.orphan = false;
      this.track(lane, this.deliver(slot));
    }
  }

  private async gain(slice: number): Promise<void> {
    const floor = await this.o.journal.getCheckpoint(this.o.consumer, PUBLISHED_READER_SOURCE);
    const lane = await this.openSlice(slice, floor);
    if (this.stopped || this.sliced?.owns(slice) !== true) return;
    this.lanes.set(slice, lane);
    this.o.metrics?.moves.inc({ transport: "journal", consumer: this.o.consumer, change: "gained" });
    this.o.logger.debug(
      { consumer: this.o.consumer, slice, position: lane.position },
      "reading a gained slice from its stored position",
    );
    this.poke();
  }

  /**
   * Stop a slice: deliver nothing more of it, wait for its handler calls running, store its
   * low-water mark and forget it. What was read and is not settled is not acknowledged.
   */
  private async lose(lane: Lane): Promise<void> {
    lane.lost = true;
    lane.abort.abort();
    this.refuseWaiters(lane);
    await Promise.all([...lane.deliveries]);
    const held = lane.window.length;
    while (lane.window[0]?.settled) lane.window.shift();
    const head = lane.window[0];
    lane.target = Math.max(lane.target, head ? head.entry.position - 1 : lane.readTo);
    const unsettled = lane.window.length;
    if (unsettled > 0) {
      this.o.metrics?.stoppedInFlight.inc({ transport: "journal", consumer: this.o.consumer });
      this.o.logger.warn(
        { consumer: this.o.consumer, slice: lane.slice, unsettled, position: lane.target },
        "stopped reading a slice with entries not settled; its next owner delivers them again from the stored position",
      );
    }
    try {
      await this.store([lane]);
    } catch (error) {
      this.o.logger.warn(
        { consumer: this.o.consumer, slice: lane.slice, position: lane.target, err: error },
        "storing the position of a lost slice failed; its next owner starts from the last one stored",
      );
    }
    this.windowed -= held;
    this.lanes.delete(lane.slice);
    this.o.metrics?.moves.inc({ transport: "journal", consumer: this.o.consumer, change: "lost" });
    if (this.full) this.wake?.();
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

  /** Stop reading; wait for the handlers in flight, then store the positions they reached. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    for (const lane of this.lanes.values()) lane.abort.abort();
    this.refuseWaiters();
    this.wake?.();
    await this.loop;
    await Promise.all([...this.transitions.values()]);
    await Promise.all([...this.lanes.values()].flatMap((lane) => [...lane.deliveries]));
    await this.storing;
    const lanes = [...this.lanes.values()];
    for (const lane of lanes) {
      while (lane.window[0]?.settled) lane.window.shift();
      const head = lane.window[0];
      lane.target = Math.max(lane.target, head ? head.entry.position - 1 : lane.readTo);
    }
    await this.store(lanes).catch(() => {});
  }
}
