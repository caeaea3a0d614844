import type { Random } from "../core/clock.js";
import type { HandOver } from "../core/hand-over.js";
import type { Logger } from "../core/logger.js";
import type { NewOutboxRow, NewPublished, OutboxRow, OutboxStore } from "../journal/types.js";
import { SeriesTally } from "../observability/tally.js";
import { type Envelope, encodeEnvelope } from "./envelope.js";
import type { DurableCopy, HandOverTarget } from "./handed-over.js";
import type { MessagingMetrics } from "./metrics.js";
import { brokerMessageId } from "./signing.js";
import { subjectMatches } from "./subjects.js";

/** A consumer of this process, with the subjects it subscribes to on the relay's transport. */
export interface LocalConsumer {
  consumer: HandOverTarget;
  subjects: readonly string[];
}

/** A row's envelope as the relay would publish it, or why it cannot be. */
export type PreparedRow =
  | { kind: "ready"; envelope: Envelope; signed: Envelope }
  | { kind: "invalid"; error: unknown }
  | { kind: "unsigned"; error: unknown };

/** What the hand-over needs of its relay. */
export interface HandOverRelay {
  readonly owner: string;
  readonly leaseMs: number;
  readonly journal: Pick<OutboxStore, "updateOutbox">;
  readonly logger: Logger;
  readonly random: Random;
  subjectOf(envelope: Envelope): string;
  prepare(row: Pick<NewOutboxRow, "id" | "category" | "payload">): PreparedRow;
  /**
   * Set when the relay's transport carries events in the committing journal's published log: the
   * entry a commit appends to publish a signed envelope (`publishedEntry`), and the count of one
   * published so. Absent: events go through outbox rows leased to the relay.
   */
  readonly atCommit?: { entry(signed: Envelope, subject: string): NewPublished; published(): void } | undefined;
  /** Publish a row held under `lease` and mark it; true once it is done (or dead), false when left for a retry. */
  relayRow(row: OutboxRow, lease: string, prepared: PreparedRow): Promise<boolean>;
  now(): number;
  /** Where the hand-over's counts go (`oncely_relay_handed_over_total`, `oncely_relay_hand_over_released_total`). */
  readonly metrics: MessagingMetrics;
}

/**
 * Integration events handed over at commit, as effects are (see `core/hand-over.ts`). The relay
 * offers to publish every event row of this process's commits: the row is inserted already
 * leased to it (a fresh token per row), and when the commit returns the relay
 *
 * 1. gives the envelope to each local consumer whose subjects match, in memory (no claim, no
 *    broker, no log read on that path), and
 * 2. publishes the signed envelope durably, for every other process and for recovery, and marks
 *    the row done, as a claim would, in commit order per producing stream.
 *
 * The local consumer remembers the durable copy (message id and body) and settles it from memory
 * when it arrives, so an event is handled once in this process, with no read for its copy; its
 * inbox, written in its handling's commit, answers any other copy.
 *
 * Failure windows: a process that dies after the commit and before the hand-over leaves the row
 * leased until `lease_until`; then any relay claims it and publishes it, and the consumers handle
 * the durable copy once (their inboxes dedup). A process that dies after handing over and before
 * publishing does the same; the consumers that handled the handed-over event answer the copy
 * from their inboxes. A handed-over handling that fails is left to the durable copy, which gets
 * the retries and dead letters of any delivery.
 *
 * Published at commit (`atCommit`: the relay's transport is the committing journal's own published
 * log): an event row never becomes a row. The runtime asks `publish` while it builds the commit,
 * the relay parses and signs the envelope there, and the commit appends its log entry instead of the
 * row (`Commit.published`): no lease, no publish, no mark. When the commit returns the envelope is
 * given to the local consumers as above. Positions follow commit order, so a stream's events are in
 * the log in commit order. A process that dies after the commit and before the hand-over leaves
 * the entry in the log, where every reader reads it; an envelope that cannot be signed or parsed is
 * left to the row and the claim path (which retries it, or marks it dead).
 *
 * Order: per stream, rows are handed over and published in commit order within a process. A
 * publish that fails releases the row to the claim path (with its backoff) and puts its stream
 * *behind*: its later rows are released to the claim path too (which publishes a stream in
 * order), until the claim path has settled every released row. Across processes (a row leased to
 * a process that died, then a later row of the same stream committed elsewhere) a later event
 * can be published first; a sequenced consumer parks it until its predecessor arrives.
 */
export class EventHandOver implements HandOver {
  private readonly targets: LocalConsumer[];
  private active = false;
  private tokens = 0;
  /** Per producing stream, the tail of its publishes in flight (commit order). */
  private readonly chains = new Map<string, Promise<void>>();
  /** Streams with rows released to the claim path, by row id; their later rows go the same way. */
  private readonly behind = new Map<string, Set<string>>();
  /** Rows taken at commit, and rows of those released to the claim path: each moved with its series. */
  private readonly counts: { handedOver: SeriesTally; released: SeriesTally };
  /**
   * Deliveries to local consumers: a test aid with no series of its own, since each consumer
   * counts what became of a handed-over event (`oncely_consumer_handed_over_total`, and the
   * `hand-over-failed` and `hand-over-declined` outcomes of `oncely_consumer_messages_total`).
   */
  private delivered = 0;
  /** Events published by their own commit (see `publish`), a part of `handedOver`: a test aid, like `delivered`. */
  private appended = 0;

  constructor(
    private readonly relay: HandOverRelay,
    consumers: readonly LocalConsumer[],
  ) {
    this.targets = [...consumers];
    const labels = { relay: relay.owner };
    this.counts = {
      handedOver: new SeriesTally(relay.metrics.relayHandedOver.labels(labels)),
      released: new SeriesTally(relay.metrics.relayHandOverReleased.labels(labels)),
    };
  }

  /** The hand-over's counts since it was built. */
  get stats(): { handedOver: number; delivered: number; released: number; appended: number } {
    return {
      handedOver: this.counts.handedOver.value,
      delivered: this.delivered,
      released: this.counts.released.value,
      appended: this.appended,
    };
  }

  /** Start or stop taking rows at commit (the relay's start and stop). */
  setActive(active: boolean): void {
    this.active = active;
  }

  lease(row: NewOutboxRow, now: number): NewOutboxRow["lease"] {
    if (!this.active || row.category !== "event") return undefined;
    const token = `${this.relay.owner}#h${++this.tokens}.${Math.floor(this.relay.random.next() * 2 ** 32).toString(36)}`;
    return { owner: token, until: now + this.relay.leaseMs };
  }

  publish(row: NewOutboxRow): { entry: NewPublished; committed(): void; failed(): void } | undefined {
    const atCommit = this.relay.atCommit;
    if (!atCommit || !this.active || row.category !== "event") return undefined;
    // An earlier row of its stream is still on its way (a publish in flight, or released to the
    // claim path): this one follows it through the outbox, so the stream keeps its order.
    if (this.chains.has(row.stream) || this.behind.has(row.stream)) return undefined;
    const prepared = this.relay.prepare(row);
    // Not publishable as it is (no key for its source, a malformed row): the row and the claim
    // path keep it, with their retries, backoff and dead state.
    if (prepared.kind !== "ready") return undefined;
    const subject = this.relay.subjectOf(prepared.envelope);
    const entry = atCommit.entry(prepared.signed, subject);
    // Announced before the commit: once it lands a reader may read the entry before the commit
    // returns here, and its copy must wait for the hand-over rather than run beside it.
    const expected = this.matching(subject).map(
      (consumer) =>
        consumer.expectHandOver?.(entry) ??
        ((envelope: Envelope | undefined) => {
          if (envelope) void consumer.handOver(envelope, entry);
        }),
    );
    return {
      entry,
      committed: () => {
        this.counts.handedOver.inc();
        this.appended++;
        atCommit.published();
        // Stopped between the commit and now: the local consumers read the entry from the log.
        const envelope = this.active ? prepared.envelope : undefined;
        if (envelope) this.delivered += expected.length;
        for (const handOver of expected) handOver(envelope);
      },
      failed: () => {
        for (const handOver of expected) handOver(undefined);
      },
    };
  }

  private matching(subject: string): HandOverTarget[] {
    return this.targets
      .filter(({ subjects }) => subjects.some((pattern) => subjectMatches(pattern, subject)))
      .map(({ consumer }) => consumer);
  }

  take(rows: OutboxRow[]): void {
    // Stopped between the commit and now: the rows stay leased until their lease runs out, and
    // any relay claims them then.
    if (!this.active) return;
    for (const row of rows) {
      const lease = row.leaseOwner;
      if (lease === null) continue;
      this.counts.handedOver.inc();
      const prepared = this.relay.prepare(row);
      // Before the publish: a consumer remembers the durable copy before the copy can exist.
      if (prepared.kind === "ready" && this.targets.length > 0) {
        this.deliverLocally(prepared.envelope, {
          messageId: brokerMessageId(prepared.signed),
          body: encodeEnvelope(prepared.signed),
        });
      }
      this.chain(row.stream, () => this.publishLeased(row, lease, prepared));
    }
  }

  /** `copy`: the durable copy's message id and body, as the transport delivers it. */
  private deliverLocally(envelope: Envelope, copy: DurableCopy): void {
    if (this.targets.length === 0) return;
    const subject = this.relay.subjectOf(envelope);
    for (const { consumer, subjects } of this.targets) {
      if (!subjects.some((pattern) => subjectMatches(pattern, subject))) continue;
      this.delivered++;
      void consumer.handOver(envelope, copy);
    }
  }

  private chain(stream: string, work: () => Promise<void>): void {
    const previous = this.chains.get(stream) ?? Promise.resolve();
    const next = previous.then(work).catch((error: unknown) => {
      this.relay.logger.error({ stream, err: error }, "handed-over event not published; its lease will expire");
    });
    this.chains.set(stream, next);
    void next.then(() => {
      if (this.chains.get(stream) === next) this.chains.delete(stream);
    });
  }

  private async publishLeased(row: OutboxRow, lease: string, prepared: PreparedRow): Promise<void> {
    const behind = this.behind.get(row.stream);
    if (behind) {
      // An earlier row of this stream waits for the claim path: this one follows it there.
      await this.relay.journal.updateOutbox(row.id, lease, {}, this.relay.now());
      behind.add(row.id);
      this.counts.released.inc();
      return;
    }
    if (await this.relay.relayRow(row, lease, prepared)) return;
    this.behind.set(row.stream, new Set([row.id]));
    this.counts.released.inc();
  }

  /** The claim path settled a row (published or dead): its stream may be handed over again. */
  settled(row: Pick<OutboxRow, "id" | "stream">): void {
    const behind = this.behind.get(row.stream);
    if (!behind) return;
    behind.delete(row.id);
    if (behind.size === 0) this.behind.delete(row.stream);
  }

  /** Rows released to the claim path and not seen settled by it (another relay may have). */
  get releasedRows(): { id: string; stream: string }[] {
    return [...this.behind].flatMap(([stream, ids]) => [...ids].map((id) => ({ id, stream })));
  }

  /** Wait for the publishes in flight (the relay's stop). */
  async settle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }
}
